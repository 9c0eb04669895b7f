// Purpose: the report's break-even table on a synthetic sweep with a known crossing (analysis_fixture.hpp): the curve
// per model and GPU count, the interpolated batch, the two measured neighbours with their intervals, the smallest
// significant batch, and the sentence the terminal shows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <tuple>

#include "analysis_fixture.hpp"
#include "break_even_curves.hpp"
#include "stats/answer.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class BreakEvenCurves : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_break_even_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    add_crossing_sweep(writer);
    writer.close();
    file_ = read_results_file(path_);
    for (const ConfigurationResults& c : file_.configurations)
      stats_.push_back(compute_configuration_stats(c, "sweep.h5", {}));
    answer_ = compute_answer(stats_);
  }
  void TearDown() override { fs::remove(path_); }
  std::string path_;
  ResultsFile file_;
  std::vector<ConfigurationStats> stats_;
  Answer answer_;
};

TEST_F(BreakEvenCurves, OneCurveWithTheKnownCrossing) {
  const std::vector<BreakEvenAnswer>& curves = answer_.break_evens;
  ASSERT_EQ(curves.size(), 1u);
  const BreakEvenAnswer& curve = curves[0];
  EXPECT_EQ(curve.curve, "16-8-3 on 2 GPUs");
  EXPECT_EQ(curve.gpus, 2);
  ASSERT_EQ(curve.points.size(), 4u);
  EXPECT_NEAR(curve.points[1].speedup, 0.8, 1e-12);
  EXPECT_NEAR(curve.points[2].speedup, 1.25, 1e-12);
  const BreakEven& b = curve.break_even;
  ASSERT_EQ(b.kind, BreakEven::Kind::crossing);
  EXPECT_NEAR(b.batch, kSweepBreakEven, 1e-4);
  EXPECT_EQ(b.below->global_batch, 32);
  EXPECT_EQ(b.above->global_batch, 128);
  ASSERT_TRUE(b.smallest_significant.has_value());
  EXPECT_EQ(b.smallest_significant->global_batch, 128);
}

TEST_F(BreakEvenCurves, TableStatesTheBatchAndItsNeighbours) {
  const Table table = break_even_table(answer_.break_evens);
  ASSERT_EQ(table.rows.size(), 1u);
  const auto value = [&](const std::string& key) {
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      if (table.columns[c].key == key) return table.rows[0][c];
    ADD_FAILURE() << "no column " << key;
    return Value{};
  };
  EXPECT_NEAR(std::get<double>(value("break_even_batch")), kSweepBreakEven, 1e-4);
  EXPECT_EQ(std::get<std::int64_t>(value("smallest_significant_batch")), 128);
  EXPECT_EQ(std::get<std::int64_t>(value("below_batch")), 32);
  EXPECT_EQ(std::get<std::int64_t>(value("above_batch")), 128);
  EXPECT_LT(std::get<double>(value("below_speedup_high")), 1.0);
  EXPECT_GT(std::get<double>(value("above_speedup_low")), 1.0);
  const std::string statement = std::get<std::string>(value("statement"));
  EXPECT_EQ(statement.rfind("break-even at global batch ~59 (between 32: 0.8 [", 0), 0u) << statement;
  EXPECT_NE(statement.find("and 128: 1.25 ["), std::string::npos) << statement;
  const std::string text = render_terminal(table);
  EXPECT_NE(text.find("16-8-3 on 2 GPUs"), std::string::npos) << text;
}

// The curve of a sweep of (batch, 1-GPU step ms, 2-GPU step ms) points.
std::vector<BreakEvenAnswer> curves_of(const std::vector<std::tuple<int, double, double>>& sweep) {
  const std::string path =
      (fs::temp_directory_path() / ("mgpu_break_even_kinds_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    for (const auto& [batch, single_ms, double_ms] : sweep) add_sweep_point(writer, batch, single_ms, double_ms);
    writer.close();
  }
  static ResultsFile file;  // the statistics point into it
  file = read_results_file(path);
  fs::remove(path);
  static std::vector<ConfigurationStats> stats;
  stats.clear();
  for (const ConfigurationResults& c : file.configurations) stats.push_back(compute_configuration_stats(c, "s.h5", {}));
  return compute_answer(stats).break_evens;
}

TEST(BreakEvenCurvesKinds, NeverAndEveryBatch) {
  EXPECT_TRUE(compute_answer({}).break_evens.empty());                                    // no pair: no curve
  const std::vector<BreakEvenAnswer> never = curves_of({{8, 1.0, 2.0}, {64, 2.0, 2.5}});  // 0.5, 0.8
  ASSERT_EQ(never.size(), 1u);
  EXPECT_EQ(never[0].break_even.kind, BreakEven::Kind::never);
  const std::string never_text = render_terminal(break_even_table(never));
  EXPECT_NE(never_text.find("never in the measured range (largest batch 64: 0.8 ["), std::string::npos) << never_text;
  const std::vector<BreakEvenAnswer> always = curves_of({{8, 2.0, 1.0}, {64, 4.0, 2.5}});  // 2, 1.6
  ASSERT_EQ(always.size(), 1u);
  EXPECT_EQ(always[0].break_even.kind, BreakEven::Kind::always);
  EXPECT_EQ(always[0].break_even.smallest_significant->global_batch, 8);
  const std::string always_text = render_terminal(break_even_table(always));
  EXPECT_NE(always_text.find("pays at every measured batch (from 8: 2 ["), std::string::npos) << always_text;
}

}  // namespace
