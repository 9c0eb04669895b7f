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
  ASSERT_EQ(b.crossings.size(), 1u);
  EXPECT_NEAR(b.crossings[0].batch, kSweepBreakEven, 1e-4);
  EXPECT_EQ(b.crossings[0].before.global_batch, 32);
  EXPECT_EQ(b.crossings[0].after.global_batch, 128);
  ASSERT_TRUE(b.faster_from.has_value());
  EXPECT_EQ(b.faster_from->global_batch, 128);
}

// The value of a column of a table's row.
Value cell(const Table& table, std::size_t row, const std::string& key) {
  for (std::size_t c = 0; c < table.columns.size(); ++c)
    if (table.columns[c].key == key) return table.rows.at(row)[c];
  ADD_FAILURE() << "no column " << key << " in " << table.key;
  return Value{};
}

TEST_F(BreakEvenCurves, TableStatesTheBatchItsIntervalAndItsNeighbours) {
  const Table table = break_even_table(answer_.break_evens);
  ASSERT_EQ(table.rows.size(), 1u);
  const Crossing& c = answer_.break_evens[0].break_even.crossings[0];
  EXPECT_NEAR(std::get<double>(cell(table, 0, "break_even_batch")), kSweepBreakEven, 1e-4);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(table, 0, "break_even_low")), c.low);
  EXPECT_DOUBLE_EQ(std::get<double>(cell(table, 0, "break_even_high")), c.high);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "break_even_low_open")), "no");
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "break_even_high_open")), "no");
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "kind")), "rising");
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "crossings")), 1);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "faster_from_batch")), 128);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "smallest_batch")), 8);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "largest_batch")), 512);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "before_batch")), 32);
  EXPECT_EQ(std::get<std::int64_t>(cell(table, 0, "after_batch")), 128);
  EXPECT_LT(std::get<double>(cell(table, 0, "before_speedup_high")), 1.0);
  EXPECT_GT(std::get<double>(cell(table, 0, "after_speedup_low")), 1.0);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "break_even")), crossing_text(c));
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "no_clear_difference")), "none");
  const std::string statement = std::get<std::string>(cell(table, 0, "statement"));
  EXPECT_EQ(statement, answer_.break_evens[0].sentence);
  EXPECT_EQ(statement.rfind("break-even at global batch ~59 [", 0), 0u) << statement;
  const std::string text = render_terminal(table);
  EXPECT_NE(text.find("16-8-3 on 2 GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find(crossing_text(c)), std::string::npos) << text;
  // One crossing: one row of the crossings table; no band.
  const Table crossings = crossings_table(answer_.break_evens);
  ASSERT_EQ(crossings.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(cell(crossings, 0, "direction")), "rising");
  EXPECT_DOUBLE_EQ(std::get<double>(cell(crossings, 0, "low")), c.low);
  EXPECT_FALSE(crossings.on_screen);
  EXPECT_TRUE(bands_table(answer_.break_evens).rows.empty());
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

TEST(BreakEvenCurvesKinds, BelowAndAboveOneAtEveryBatch) {
  EXPECT_TRUE(compute_answer({}).break_evens.empty());                                    // no pair: no curve
  const std::vector<BreakEvenAnswer> below = curves_of({{8, 1.0, 2.0}, {64, 2.0, 2.5}});  // 0.5, 0.8
  ASSERT_EQ(below.size(), 1u);
  EXPECT_EQ(break_even_kind(below[0].break_even), "below_1");
  const std::string below_text = render_terminal(break_even_table(below));
  EXPECT_NE(below_text.find("none (speedup < 1 from 8 to 64)"), std::string::npos) << below_text;
  EXPECT_NE(below_text.find("no break-even in the measured range: the speedup is below 1 at every batch from 8 to 64"),
            std::string::npos)
      << below_text;
  const std::vector<BreakEvenAnswer> above = curves_of({{8, 2.0, 1.0}, {64, 4.0, 2.5}});  // 2, 1.6
  ASSERT_EQ(above.size(), 1u);
  EXPECT_EQ(break_even_kind(above[0].break_even), "above_1");
  EXPECT_EQ(above[0].break_even.faster_from->global_batch, 8);
  const std::string above_text = render_terminal(break_even_table(above));
  EXPECT_NE(above_text.find("none (speedup >= 1 from 8 to 64)"), std::string::npos) << above_text;
}

// A flat stretch of measured batches (speedup exactly 1, intervals ±1%) is a band of no clear difference, a row of the
// bands table; the curve crosses 1 where it leaves it.
TEST(BreakEvenCurvesKinds, AFlatStretchIsABand) {
  const std::vector<BreakEvenAnswer> curves =
      curves_of({{8, 1.0, 2.0}, {32, 2.0, 2.0}, {128, 4.0, 4.0}, {512, 16.0, 8.0}});  // 0.5, 1, 1, 2
  ASSERT_EQ(curves.size(), 1u);
  const Table bands = bands_table(curves);
  ASSERT_EQ(bands.rows.size(), 1u);
  EXPECT_EQ(std::get<std::int64_t>(cell(bands, 0, "from_batch")), 32);
  EXPECT_EQ(std::get<std::int64_t>(cell(bands, 0, "to_batch")), 128);
  EXPECT_EQ(std::get<std::int64_t>(cell(bands, 0, "batches")), 2);
  const Table table = break_even_table(curves);
  EXPECT_EQ(std::get<std::string>(cell(table, 0, "no_clear_difference")), "32 to 128 (1)");
  EXPECT_NE(render_terminal(table).find("no clear difference from 32 to 128 (1)"), std::string::npos);
}

}  // namespace
