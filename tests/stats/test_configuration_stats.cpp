// Purpose: per-configuration statistics from raw per-step data (configuration_stats.hpp) on the synthetic files of
// analysis_fixture.hpp, written by ResultsWriter and read back by read_results_file; every expected value is derived
// by hand in analysis_fixture.hpp's comments and below.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "analysis/analysis_fixture.hpp"
#include "platform/error.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/statistics.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class ConfigurationStatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_stats_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    add_single(writer);
    add_double(writer);
    writer.close();
    file_ = read_results_file(path_);
  }
  void TearDown() override { fs::remove(path_); }
  std::string path_;
  ResultsFile file_;
};

TEST_F(ConfigurationStatsTest, SingleGpuOutlierExcludedAndFiguresByHand) {
  const ConfigurationStats s = compute_configuration_stats(file_.configuration("single"), "f.h5", {});
  EXPECT_EQ(s.runs_total, 6);
  EXPECT_EQ(s.steps_per_run, 2);  // the 100 ms warm-up step is not counted
  ASSERT_EQ(s.run_throughput.size(), 6u);
  // 8 samples × 2 steps / (2 × step ms / 1000).
  const std::vector<double> expected = {2000, 2000, 2000, 1600, 1600, 200};
  for (std::size_t r = 0; r < 6; ++r) EXPECT_NEAR(s.run_throughput[r], expected[r], 1e-9);
  // median 1800, MAD 200: M = 0.6745·(200 − 1800)/200 = −5.396 for the last run, ±0.6745 for the others.
  EXPECT_NEAR(s.run_modified_z[5], -5.396, 1e-9);
  EXPECT_NEAR(s.run_modified_z[0], 0.6745, 1e-9);
  EXPECT_EQ(s.run_kept, (std::vector<bool>{true, true, true, true, true, false}));
  EXPECT_EQ(s.runs_kept, 5);
  // Kept: 2000 2000 2000 1600 1600 → mean 1840, variance 192000/4 = 48000, median 2000.
  EXPECT_NEAR(s.throughput.mean, 1840, 1e-9);
  EXPECT_NEAR(s.throughput.sd, std::sqrt(48000.0), 1e-9);
  EXPECT_NEAR(s.throughput.median, 2000, 1e-9);
  EXPECT_NEAR(s.throughput.half_width, 2.7764451 * std::sqrt(48000.0 / 5), 1e-4);  // t(0.975, 4) = 2.776
  // Mean step over kept runs 4.4 ms = forward 1.2 + backward 2 + optimizer 0.5 + other 0.7.
  EXPECT_NEAR(s.mean_step_ms, 4.4, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::forward), 1.2, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::backward), 2.0, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::optimizer), 0.5, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::other), 0.7, 1e-12);
  EXPECT_EQ(s.phase(BreakdownPhase::allreduce), 0);
  // The step's GEMMs of the 16-8-3 model at batch 8 (no input gradient for layer 0): 2·8·(3·152 − 128) = 5,248
  // FLOPs in 4.4 ms; not the file's dense_weight_count, which the count never reads.
  EXPECT_NEAR(s.tflops, 5248 / 4.4e-3 / 1e12, 1e-20);
  EXPECT_NEAR(s.peak_memory_mib, 1024, 1e-9);  // the excluded run's 10 GiB does not count
  EXPECT_FALSE(s.clocks_recorded);
}

TEST_F(ConfigurationStatsTest, TwoGpuStepIsThePerStepMaximumOverRanks) {
  const ConfigurationStats s = compute_configuration_stats(file_.configuration("double"), "f.h5", {});
  const std::vector<double> expected = {3200, 3200, 3200, 4000, 4000};
  for (std::size_t r = 0; r < 5; ++r) EXPECT_NEAR(s.run_throughput[r], expected[r], 1e-9);
  EXPECT_EQ(s.runs_kept, 5);  // MAD = 0: nothing excluded
  EXPECT_NEAR(s.throughput.mean, 3520, 1e-9);
  EXPECT_NEAR(s.mean_step_ms, 2.3, 1e-12);
  // TFLOP/s per GPU: each rank's step runs the local batch of 4, 2·4·328 = 2,624 FLOPs in the mean step of 2.3 ms.
  EXPECT_NEAR(s.tflops, 2624 / 2.3e-3 / 1e12, 1e-20);
  // The critical rank's phases; the fast rank's 0.05 ms values would give other ≈ 2.1.
  EXPECT_NEAR(s.phase(BreakdownPhase::forward), 0.92, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::backward), 0.46, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::allreduce), 0.56, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::exposed_comm), 0.62, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::optimizer), 0.2, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::other), 0.1, 1e-12);
  EXPECT_NEAR(s.peak_memory_mib, 3072, 1e-9);  // rank 1's
  EXPECT_TRUE(s.clocks_recorded);
  EXPECT_EQ(s.throttled_runs, 1);
}

TEST_F(ConfigurationStatsTest, PeakMemoryBelowOneMibAndNoneRecorded) {
  // The peak is the kept runs' largest, however small: half a MiB stays 0.5, and none recorded (0 bytes) stays 0.
  ConfigurationResults c = file_.configuration("single");
  for (std::int64_t& bytes : c.measurements.memory_peak_bytes.values) bytes = 512 * 1024;
  EXPECT_DOUBLE_EQ(compute_configuration_stats(c, "f.h5", {}).peak_memory_mib, 0.5);
  for (std::int64_t& bytes : c.measurements.memory_peak_bytes.values) bytes = 0;
  EXPECT_DOUBLE_EQ(compute_configuration_stats(c, "f.h5", {}).peak_memory_mib, 0.0);
}

TEST_F(ConfigurationStatsTest, IncludeWarmupAndThreshold) {
  AnalysisOptions options;
  options.include_warmup = true;
  const ConfigurationStats with_warmup = compute_configuration_stats(file_.configuration("double"), "f.h5", options);
  EXPECT_EQ(with_warmup.steps_per_run, 3);
  // Run 0: 8 × 3 / (100 + 2.5 + 2.5 ms).
  EXPECT_NEAR(with_warmup.run_throughput[0], 24 / 0.105, 1e-9);
  options = {};
  options.outlier_threshold = 100;  // nothing is that far out
  EXPECT_EQ(compute_configuration_stats(file_.configuration("single"), "f.h5", options).runs_kept, 6);
}

// --timing interleaved (add_interleaved): the runs without marks give the throughput and the mean step, the marked
// runs give the phases, with shares of their own step. One kind of run alone gives both.
TEST(ConfigurationStatsRunKinds, ThroughputFromUnmarkedRunsPhasesFromMarkedOnes) {
  const std::string path =
      (fs::temp_directory_path() / ("mgpu_stats_kinds_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    add_interleaved(writer, "kinds");
    writer.close();
  }
  const ResultsFile file = read_results_file(path);
  fs::remove(path);
  const ConfigurationStats s = compute_configuration_stats(file.configuration("kinds"), path, {});
  EXPECT_EQ(s.throughput_run_index, (std::vector<int>{0, 1, 2, 3, 5}));
  EXPECT_EQ(s.runs_total, 5);
  // Throughputs 2000, 1951, 1000, 2051, 2000: median 2000, MAD 49, M(1000) = 0.6745 x 1000 / 49 = 13.8.
  EXPECT_EQ(s.runs_kept, 4);
  EXPECT_EQ(s.run_kept, (std::vector<bool>{true, true, false, true, true}));
  EXPECT_NEAR(s.throughput.mean, (2000 + 16000 / 8.2 + 16000 / 7.8 + 2000) / 4, 1e-9);
  EXPECT_NEAR(s.mean_step_ms, 4.0, 1e-12);
  EXPECT_EQ(s.phase_runs_total, 2);
  EXPECT_EQ(s.phase_runs_kept, 2);
  EXPECT_NEAR(s.phase(BreakdownPhase::step), 4.75, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::forward), 1.75, 1e-12);
  EXPECT_NEAR(s.phase(BreakdownPhase::other), 0.5, 1e-12);
  EXPECT_NEAR(s.share(BreakdownPhase::forward), 1.75 / 4.75, 1e-12);
}

// A GPU's step is a fraction of a millisecond: its TFLOP/s come from the mean step like any other's (5,248 FLOPs /
// 0.04 ms = 1.312e-4 TFLOP/s).
TEST(ConfigurationStatsRunKinds, TflopsOfASubMillisecondStep) {
  const ResultsFile file = steady_results("mgpu_stats_fast", "fast", {0.01, 0.02, 0.0, 0.0, 0.005, 0.04}, 3);
  const ConfigurationStats s = compute_configuration_stats(file.configuration("fast"), "fast.h5", {});
  EXPECT_NEAR(s.mean_step_ms, 0.04, 1e-12);
  EXPECT_NEAR(s.tflops, 1.312e-4, 1e-16);
}

// Phases that add up to the step but for the rounding of their stored fp32 times leave an "other" of exactly 0; one
// of a thousandth of a percent of the step is kept.
TEST(ConfigurationStatsRunKinds, OtherIsZeroWhereOnlyRoundingIsLeft) {
  ASSERT_NE(double(0.3f) - (double(0.1f) + double(0.2f)), 0.0);  // the residue the stored times leave
  const ResultsFile rounded = steady_results("mgpu_stats_rounded", "rounded", {0.1, 0.2, 0.0, 0.0, 0.0, 0.3}, 3);
  EXPECT_EQ(compute_configuration_stats(rounded.configuration("rounded"), "r.h5", {}).phase(BreakdownPhase::other), 0);
  const ResultsFile small = steady_results("mgpu_stats_small", "small", {0.1, 0.19999, 0.0, 0.0, 0.0, 0.3}, 3);
  EXPECT_NEAR(compute_configuration_stats(small.configuration("small"), "s.h5", {}).phase(BreakdownPhase::other), 1e-5,
              1e-7);
}

TEST(ConfigurationStatsErrors, NoCompletedRunIsAnError) {
  ConfigurationResults empty;
  empty.metadata = synthetic_metadata("empty", 1);
  try {
    compute_configuration_stats(empty, "e.h5", {});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "'e.h5': configuration 'empty' has no completed run");
  }
}

}  // namespace
