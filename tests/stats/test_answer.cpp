// Purpose: the answer, computed once (answer.hpp): one pair per model, batch, GPU count and settings however many
// trials it has, judged over its trial means where it has trials (one "no significant difference" for trials whose
// run-level intervals exclude each other) and over its runs where measured once; the break-even of a sweep from the
// pairs' own speedups; and the lines mgpu_bench prints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analysis_fixture.hpp"
#include "stats/answer.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class AnswerOfAFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_answer_" + std::to_string(::getpid()) + ".h5")).string();
  }
  void TearDown() override { fs::remove(path_); }
  template <typename Write>
  Answer answer_of(Write write) {
    {
      ResultsWriter writer(path_, true);
      write(writer);
      writer.close();
    }
    file_ = read_results_file(path_);
    stats_.clear();
    for (const ConfigurationResults& c : file_.configurations)
      stats_.push_back(compute_configuration_stats(c, path_, {}));
    return compute_answer(stats_);
  }
  std::string path_;
  ResultsFile file_;
  std::vector<ConfigurationStats> stats_;
};

TEST_F(AnswerOfAFile, TrialsThatDisagreeAtRunLevelGiveOneAnswerWithoutADifference) {
  const Answer answer = answer_of(add_disagreeing_trials);
  ASSERT_EQ(answer.pairs.size(), 1u);
  const PairAnswer& a = answer.pairs[0];
  ASSERT_EQ(a.pair.trials(), 2u);
  // Each trial alone is decided, the first slower and the second faster, with intervals that exclude each other.
  ASSERT_TRUE(a.pair.trial_speedups[0].has_interval && a.pair.trial_speedups[1].has_interval);
  EXPECT_LT(a.pair.trial_speedups[0].high, 0.995);
  EXPECT_GT(a.pair.trial_speedups[1].low, 1.015);
  EXPECT_LT(a.pair.trial_speedups[0].high, a.pair.trial_speedups[1].low);
  // Over the trial means: about 1.005, its interval containing 1.
  EXPECT_NEAR(a.pair.speedup.ratio, 1.005, 1e-3);
  ASSERT_TRUE(a.pair.speedup.has_interval);
  EXPECT_LT(a.pair.speedup.low, 1.0);
  EXPECT_GT(a.pair.speedup.high, 1.0);
  EXPECT_EQ(a.conclusion.rfind("no significant difference from 1 GPU (the 95% interval contains 1)", 0), 0u)
      << a.sentence;
  EXPECT_EQ(a.curve, "16-8-3 on 2 GPUs");
  EXPECT_NE(a.figures.find("16-8-3, global batch 8, 2 GPUs, 2 trials: speedup 1.005 ["), std::string::npos)
      << a.figures;
  // The console says it once: one figures line and one sentence line for the pair.
  const std::vector<std::string> lines = answer_lines(answer, path_);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "  " + a.figures);
  EXPECT_EQ(lines[2], "    " + a.sentence);
}

TEST_F(AnswerOfAFile, ASweepGivesItsBreakEvenFromThePairs) {
  const Answer answer = answer_of(add_crossing_sweep);
  ASSERT_EQ(answer.pairs.size(), 4u);
  ASSERT_EQ(answer.break_evens.size(), 1u);
  const BreakEvenAnswer& curve = answer.break_evens[0];
  ASSERT_EQ(curve.points.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(curve.points[i].speedup, answer.pairs[i].pair.speedup.ratio);
  ASSERT_EQ(curve.break_even.crossings.size(), 1u);
  EXPECT_NEAR(curve.break_even.crossings[0].batch, kSweepBreakEven, 1e-4);
  // The runs spread ±1% on both sides: a narrow interval around the crossing, closed at both ends.
  const Crossing& c = curve.break_even.crossings[0];
  ASSERT_TRUE(c.has_interval);
  EXPECT_LT(c.low, kSweepBreakEven);
  EXPECT_GT(c.high, kSweepBreakEven);
  EXPECT_GT(c.low, 32);
  EXPECT_LT(c.high, 128);
  EXPECT_EQ(curve.sentence.rfind("break-even at global batch ~59 [", 0), 0u) << curve.sentence;
  EXPECT_NE(curve.sentence.find("], where the speedup rises through 1 between 32: 0.8 ["), std::string::npos)
      << curve.sentence;
  EXPECT_NE(curve.sentence.find("; slower from 8 to 32 (0.5 to 0.8), faster from 128 to 512 (1.25 to 2), up to the "
                                "largest batch measured"),
            std::string::npos)
      << curve.sentence;
  const std::vector<std::string> lines = answer_lines(answer, path_);
  EXPECT_EQ(lines.back(), "  break-even, 16-8-3 on 2 GPUs: " + curve.sentence);
  EXPECT_FALSE(answer.any_trials());
}

// --overlap auto turns overlap on from some local batch on: the sweep stays one curve, so its break-even is found
// across the batch where the setting flips (here 128 and 512 overlapped), and the curve's name leaves the setting out.
TEST_F(AnswerOfAFile, SettingsDecidedPerBatchDoNotSplitACurve) {
  const Answer answer = answer_of([](ResultsWriter& writer) {
    add_sweep_point(writer, 8, 1.0, 2.0);
    add_sweep_point(writer, 32, 2.0, 2.5);
    add_sweep_point(writer, 128, 5.0, 4.0, 2, true);
    add_sweep_point(writer, 512, 16.0, 8.0, 2, true);
  });
  ASSERT_EQ(answer.pairs.size(), 4u);
  ASSERT_EQ(answer.break_evens.size(), 1u);
  EXPECT_EQ(answer.break_evens[0].points.size(), 4u);
  EXPECT_NEAR(answer.break_evens[0].break_even.crossings.at(0).batch, kSweepBreakEven, 1e-4);
  EXPECT_EQ(answer.break_evens[0].curve, "16-8-3 on 2 GPUs");
  for (const PairAnswer& a : answer.pairs) EXPECT_EQ(a.curve, "16-8-3 on 2 GPUs") << a.figures;
}

// A file that compares overlap on and off at the same batch keeps a curve for each setting.
TEST_F(AnswerOfAFile, ASettingComparedAtOneBatchKeepsItsOwnCurve) {
  const Answer answer = answer_of([](ResultsWriter& writer) {
    add_crossing_sweep(writer);
    add_sweep_point(writer, 128, 5.0, 3.0, 2, true, false);
    add_sweep_point(writer, 512, 16.0, 7.0, 2, true, false);
  });
  ASSERT_EQ(answer.pairs.size(), 6u);
  ASSERT_EQ(answer.break_evens.size(), 2u);
  EXPECT_EQ(answer.break_evens[0].curve, "16-8-3 on 2 GPUs");
  EXPECT_EQ(answer.break_evens[0].points.size(), 4u);
  EXPECT_NEAR(answer.break_evens[0].break_even.crossings.at(0).batch, kSweepBreakEven, 1e-4);
  EXPECT_NE(answer.break_evens[1].curve.find("overlap=on"), std::string::npos) << answer.break_evens[1].curve;
  EXPECT_EQ(answer.break_evens[1].points.size(), 2u);
}

// With the 1-GPU configuration at the local batch in the file, the figures give the speedup's ceiling and the share
// of it reached: steps 1.0 ms (1 GPU, batch 16), 1.6 ms (1 GPU, 32), 1.25 ms (2 GPUs, 32): speedup 1.28, ceiling
// 1.6 / 1.0 = 1.6, reached 80%. The pair at 16 (local batch 8, not measured) has none.
TEST_F(AnswerOfAFile, TheFiguresGiveTheCeilingWhereTheLocalBatchWasMeasured) {
  const Answer answer = answer_of([](ResultsWriter& writer) {
    add_sweep_point(writer, 16, 1.0, 0.9);
    add_sweep_point(writer, 32, 1.6, 1.25);
  });
  ASSERT_EQ(answer.pairs.size(), 2u);
  EXPECT_EQ(answer.pairs[0].figures.find("ceiling"), std::string::npos) << answer.pairs[0].figures;
  const std::string& figures = answer.pairs[1].figures;
  EXPECT_NE(figures.find("speedup 1.280 ["), std::string::npos) << figures;
  EXPECT_NE(figures.find(", efficiency 64.0%, ceiling 1.600 ["), std::string::npos) << figures;
  EXPECT_NE(figures.find("], reached 80.0% ["), std::string::npos) << figures;
  EXPECT_NEAR(answer.pairs[1].pair.ceiling.ratio, 1.6, 1e-9);
  EXPECT_NEAR(answer.pairs[1].pair.ceiling_fraction.ratio, 0.8, 1e-9);
}

// One batch is no sweep: no break-even. A pair measured once says how many runs each side kept.
TEST_F(AnswerOfAFile, OnePairMeasuredOnce) {
  const Answer answer = answer_of([](ResultsWriter& writer) {
    add_single(writer);
    add_double(writer);
  });
  ASSERT_EQ(answer.pairs.size(), 1u);
  EXPECT_TRUE(answer.break_evens.empty());
  EXPECT_EQ(answer.pairs[0].figures,
            "16-8-3, global batch 8, 2 GPUs: speedup 1.913 [1.599, 2.286], efficiency 95.7%, Welch p 0.000283 (kept "
            "runs 5/5 on 2, 5/6 on 1)");
  EXPECT_EQ(answer.pairs[0].sentence, "2 GPUs are 1.91x as fast as 1 [1.60, 2.29]: adding a GPU speeds this step up");
  EXPECT_EQ(answer.pairs[0].conclusion, "adding a GPU speeds this step up");
}

TEST(Answer, NothingToPairSaysSo) {
  const Answer answer = compute_answer({});
  EXPECT_TRUE(answer.pairs.empty());
  const std::vector<std::string> lines = answer_lines(answer, "f.h5");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1],
            "  no N-GPU configuration with its 1-GPU baseline in f.h5 (an explicit --gpus without 1 measures "
            "no baseline)");
}

}  // namespace
