// Purpose: the verdict mgpu_bench prints last (verdict.hpp): its sentence at the boundaries of the speedup interval
// (wholly below 1, containing 1, wholly above 1, none), one rank, and the lines of a synthetic file written by
// ResultsWriter (a pair's figures, and the break-even of a two-batch sweep with a known crossing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/analysis_fixture.hpp"
#include "stats/statistics.hpp"
#include "stats/verdict.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

RatioInterval interval(double ratio, double low, double high) {
  RatioInterval r;
  r.ratio = ratio;
  r.has_interval = true;
  r.low = low;
  r.high = high;
  return r;
}

bool contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines)
    if (line.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(VerdictSentence, IntervalWhollyBelowOneSlowsTheStepDown) {
  EXPECT_EQ(speedup_sentence(2, interval(0.4213, 0.4181, 0.4262), 50),
            "2 GPUs are 0.42x as fast as 1 [0.42, 0.43]: adding a GPU slows this step down");
  // The upper end must lie below 1 by more than the minimum effect (2%).
  EXPECT_NE(speedup_sentence(2, interval(0.95, 0.94, 0.9799), 50).find("slows this step down"), std::string::npos);
}

TEST(VerdictSentence, AnIntervalThatExcludesOneByLessThanTheMinimumEffectIsNoClearDifference) {
  EXPECT_EQ(kMinimumEffect, 0.02);
  EXPECT_EQ(speedup_sentence(2, interval(0.98, 0.97, 0.9999), 50),
            "2 GPUs are 0.98x as fast as 1 [0.97, 1.00]: no clear difference from 1 GPU (the 95% interval excludes 1, "
            "not the 2% either side of it)");
  // The band's ends belong to the band.
  EXPECT_NE(speedup_sentence(2, interval(0.97, 0.96, 0.98), 50).find("no clear difference"), std::string::npos);
  EXPECT_NE(speedup_sentence(2, interval(1.03, 1.02, 1.04), 50).find("no clear difference"), std::string::npos);
  EXPECT_NE(speedup_sentence(2, interval(1.01, 1.0001, 1.02), 50).find("no clear difference"), std::string::npos);
}

TEST(VerdictSentence, IntervalContainingOneIsNoSignificantDifference) {
  EXPECT_EQ(speedup_sentence(2, interval(1.01, 0.98, 1.03), 50),
            "2 GPUs are 1.01x as fast as 1 [0.98, 1.03]: no significant difference from 1 GPU (the 95% interval "
            "contains 1)");
  // An end exactly at 1 belongs to the interval: not significant either way.
  EXPECT_NE(speedup_sentence(2, interval(0.99, 0.98, 1.0), 50).find("no significant difference"), std::string::npos);
  EXPECT_NE(speedup_sentence(2, interval(1.01, 1.0, 1.02), 50).find("no significant difference"), std::string::npos);
}

TEST(VerdictSentence, IntervalWhollyAboveOneSpeedsTheStepUp) {
  EXPECT_EQ(speedup_sentence(4, interval(1.762, 1.741, 1.779), 50),
            "4 GPUs are 1.76x as fast as 1 [1.74, 1.78]: adding GPUs speeds this step up");
  EXPECT_NE(speedup_sentence(2, interval(1.03, 1.0201, 1.04), 50).find("speeds this step up"), std::string::npos);
}

TEST(VerdictSentence, FewerThanFiveKeptRunsGiveNoInterval) {
  RatioInterval none;
  none.ratio = 0.452;
  EXPECT_EQ(speedup_sentence(2, none, 4),
            "2 GPUs are 0.45x as fast as 1 (no interval: fewer than 5 kept runs): too few runs to tell");
  EXPECT_NE(speedup_sentence(2, none, 5).find("too noisy to tell"), std::string::npos);
}

// What more trials would do, the half-width scaling with t(0.975, T - 1) / sqrt(T) (t from NIST/SEMATECH's table):
// 2 trials [0.99, 1.11] around 1.05 need a half-width of 0.03: 3 trials give 0.06 * (4.30265 / sqrt 3) /
// (12.7062 / sqrt 2) = 0.0166. 5 trials [0.99, 1.07] around 1.03 need 0.01 = 0.04 / 4 of the width: t(4) / sqrt 5 /
// 4 = 0.310416; 42 trials give 2.01954 / sqrt 42 = 0.311621 (too wide), 43 give 2.01808 / sqrt 43 = 0.307755.
TEST(VerdictSentence, MoreTrialsSaysHowManyWouldDecide) {
  RatioInterval s;
  s.has_interval = true;
  s.ratio = 1.05, s.low = 0.99, s.high = 1.11;
  EXPECT_EQ(more_trials_note(s, 2), "; about 3 trials in all would tell faster or slower by more than 2%");
  s.ratio = 1.03, s.low = 0.99, s.high = 1.07;
  EXPECT_EQ(more_trials_note(s, 5), "; about 43 trials in all would tell faster or slower by more than 2%");
  s.ratio = 1.01, s.low = 0.97, s.high = 1.05;  // the speedup itself within 2% of 1
  EXPECT_EQ(more_trials_note(s, 3), "; more trials would narrow the interval around a speedup within 2% of 1");
  s.ratio = 1.05, s.low = 1.021, s.high = 1.08;  // already faster: nothing to add
  EXPECT_EQ(more_trials_note(s, 3), "");
  s.ratio = 1.021, s.low = 0.0, s.high = 2.042;  // needs a half-width of 0.001 from 1.021
  EXPECT_EQ(more_trials_note(s, 2), "; more than 1000 trials would be needed to tell faster or slower");
  // An interval that ends exactly at the band's edge 1 -+ 2% does not yet tell: the sentence says "no clear
  // difference" (speedup_sentence's strict comparisons), so the note still says what more trials would do.
  s.ratio = 0.9, s.low = 0.8, s.high = 1 - kMinimumEffect;
  EXPECT_EQ(speedup_sentence(2, s, 5).find("slows"), std::string::npos);
  EXPECT_NE(more_trials_note(s, 3), "");
  s.ratio = 1.1, s.low = 1 + kMinimumEffect, s.high = 1.2;
  EXPECT_EQ(speedup_sentence(2, s, 5).find("speeds"), std::string::npos);
  EXPECT_NE(more_trials_note(s, 3), "");
  s.has_interval = false;
  EXPECT_EQ(more_trials_note(s, 2), "");
}

// The most trials it names is 1000: an interval that 1000 trials would just narrow enough gets "about 1000", one that
// needs 1001 the sentence without a count (each half-width set between two counts' t(0.975, T - 1) / sqrt(T)).
TEST(VerdictSentence, MoreTrialsNamesAtMostAThousand) {
  const auto width_per = [](int t) { return student_t_quantile(0.975, t - 1) / std::sqrt(static_cast<double>(t)); };
  RatioInterval s;
  s.has_interval = true;
  s.ratio = 1.05;  // needs a half-width of 0.03
  const auto set_spread = [&](double spread) {
    s.low = s.ratio - spread * width_per(2);
    s.high = s.ratio + spread * width_per(2);
  };
  set_spread(0.03 / ((width_per(999) + width_per(1000)) / 2));
  EXPECT_EQ(more_trials_note(s, 2), "; about 1000 trials in all would tell faster or slower by more than 2%");
  set_spread(0.03 / ((width_per(1000) + width_per(1001)) / 2));
  EXPECT_EQ(more_trials_note(s, 2), "; more than 1000 trials would be needed to tell faster or slower");
}

TEST(VerdictLines, OneRankSaysAVerdictNeedsTwo) {
  const std::vector<std::string> lines = verdict_lines(ResultsFile{}, 1);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("needs >= 2 ranks, this job has 1"), std::string::npos) << lines[0];
}

class VerdictFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_verdict_" + std::to_string(::getpid()) + ".h5")).string();
  }
  void TearDown() override { fs::remove(path_); }

  // A configuration of `ranks` ranks at global batch `batch` whose runs' measured steps take `scale` times
  // 4.0, 4.1, 3.9, 4.0, 4.05 ms: configurations of the same batch then differ by exactly 1 / scale in throughput.
  // With `runs` below 5, only the first that many runs (an interrupted configuration).
  static void add_scaled(ResultsWriter& writer, const std::string& name, int ranks, int batch, double scale,
                         int runs = 5) {
    ConfigurationMetadata metadata = synthetic_metadata(name, ranks);
    metadata.configuration.training.global_batch = batch;
    metadata.local_batch = batch / ranks;
    ResultsWriter::Configuration c = writer.add_configuration(metadata);
    const std::vector<double> bases = {4.0, 4.1, 3.9, 4.0, 4.05};
    for (const double base : std::vector<double>(bases.begin(), bases.begin() + runs)) {
      const double step = base * scale;
      const std::vector<double> phases = {step / 2, step / 4, 0.0, 0.0, step / 4, step};
      std::vector<RunRecord> per_rank;
      for (int rank = 0; rank < ranks; ++rank) per_rank.push_back(synthetic_record({phases, phases}, 1.0, 0.0, 0));
      writer.append_run(c, per_rank);
    }
    writer.finish(c);
  }
  std::string path_;
};

TEST_F(VerdictFile, APairGivesItsFiguresAndSentence) {
  ResultsWriter writer(path_, true);
  add_single(writer);
  add_double(writer);
  writer.close();
  const std::vector<std::string> lines = verdict_lines(read_results_file(path_), 2);
  // analysis_fixture.hpp: kept mean throughputs 1840 (1 GPU) and 3520 (2 GPUs): speedup 1.913, efficiency 95.7%.
  EXPECT_TRUE(contains(lines, "16-8-3, global batch 8, 2 GPUs: speedup 1.913 [")) << joined(lines);
  EXPECT_TRUE(contains(lines, "efficiency 95.7%")) << joined(lines);
  EXPECT_TRUE(contains(lines, "kept runs 5/5 on 2, 5/6 on 1")) << joined(lines);
  EXPECT_TRUE(contains(lines, "2 GPUs are 1.91x as fast as 1 [")) << joined(lines);
  EXPECT_FALSE(contains(lines, "break-even")) << "one batch is no sweep:\n" << joined(lines);
}

TEST_F(VerdictFile, ABatchSweepGivesTheBreakEven) {
  ResultsWriter writer(path_, true);
  // Speedup 0.8 at batch 8 and 2.0 at batch 64: the curve crosses 1 at 8 · 8^((1 - 0.8) / (2 - 0.8)) = 11.3
  // (linear in log batch).
  add_scaled(writer, "b8_n1", 1, 8, 1.0);
  add_scaled(writer, "b8_n2", 2, 8, 1.25);
  add_scaled(writer, "b64_n1", 1, 64, 1.0);
  add_scaled(writer, "b64_n2", 2, 64, 0.5);
  writer.close();
  const std::vector<std::string> lines = verdict_lines(read_results_file(path_), 2);
  EXPECT_TRUE(contains(lines, "global batch 8, 2 GPUs: speedup 0.800")) << joined(lines);
  EXPECT_TRUE(contains(lines, "adding a GPU slows this step down")) << joined(lines);
  EXPECT_TRUE(contains(lines, "adding a GPU speeds this step up")) << joined(lines);
  EXPECT_TRUE(contains(lines, "break-even, 16-8-3 on 2 GPUs: break-even at global batch ~11 [")) << joined(lines);
  EXPECT_TRUE(contains(lines, "], where the speedup rises through 1 between 8: 0.8 [")) << joined(lines);
  EXPECT_TRUE(contains(lines, "; slower at 8 (0.8), faster at 64 (2), the largest batch measured")) << joined(lines);
}

// A configuration that completed a single run (a job stopped early) still has a verdict line, which says that its
// runs are too few for an interval; one that completed none is left out.
TEST_F(VerdictFile, OneRunIsTooFewToTellAndNoRunIsLeftOut) {
  ResultsWriter writer(path_, true);
  add_scaled(writer, "b8_n1", 1, 8, 1.0);
  add_scaled(writer, "b8_n2", 2, 8, 0.5, 1);
  writer.add_configuration(synthetic_metadata("b16_n2", 2, 16));  // started, no run completed
  writer.close();
  const std::vector<std::string> lines = verdict_lines(read_results_file(path_), 2);
  EXPECT_TRUE(contains(lines, "global batch 8, 2 GPUs: speedup 2.0")) << joined(lines);
  EXPECT_TRUE(contains(lines, "kept runs 1/1 on 2, 5/5 on 1")) << joined(lines);
  EXPECT_TRUE(contains(lines, "too few runs to tell")) << joined(lines);
  EXPECT_FALSE(contains(lines, "global batch 16")) << joined(lines);
}

TEST_F(VerdictFile, NoBaselineIsSaid) {
  ResultsWriter writer(path_, true);
  add_double(writer);
  writer.close();
  const std::vector<std::string> lines = verdict_lines(read_results_file(path_), 2);
  EXPECT_TRUE(contains(lines, "no N-GPU configuration with its 1-GPU baseline")) << joined(lines);
}

}  // namespace
