// Purpose: tests of mgpu_analyze predict's library: the predicted grid and its speedups, and --check on a synthetic
// results file whose step times are the cost model's own predictions (every error 0), on the synthetic probe and sweep
// of tests/predict/step_cost_fixture.hpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>

#include "analysis_fixture.hpp"
#include "predict.hpp"
#include "predict/step_cost_fixture.hpp"

using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::predict;
using namespace mgpu::analysis_test;
namespace fixture = mgpu::step_cost_test;

namespace {

class PredictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_predict_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    options_.probe_path = dir_ + "/tools.h5";
    options_.allreduce_paths = {options_.probe_path};
    fixture::write_probe_and_sweep(options_.probe_path);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A configuration of the test model at global batch 32 whose every step takes step_ms.
  static void add(ResultsWriter& writer, const std::string& name, int ranks, bool fused, double step_ms) {
    ConfigurationMetadata m = synthetic_metadata(name, ranks);
    m.configuration.training.model.widths = fixture::kWidths;
    m.configuration.training.global_batch = 32;
    m.local_batch = 32 / ranks;
    m.configuration.training.graph = true;
    m.configuration.training.fused_optimizer = fused;
    ResultsWriter::Configuration c = writer.add_configuration(m);
    const std::vector<double> phases = {0, 0, 0, 0, 0, step_ms};
    for (int run = 0; run < 2; ++run)
      writer.append_run(c, std::vector<RunRecord>(ranks, synthetic_record({phases, phases}, 0, 0, 0)));
  }

  std::string dir_;
  PredictOptions options_;
};

}  // namespace

TEST_F(PredictTest, GridSpeedupIsTheOneGpuStepOverTheNGpuStep) {
  const StepCostModel model = build_step_cost_model(options_, Precision::fp32);
  const auto grid = predict_grid(model, custom_model(fixture::kWidths, 0.0), {32}, {1, 2}, Precision::fp32);
  ASSERT_EQ(grid.size(), 2u);
  EXPECT_NEAR(grid[0].speedup, 1.0, 1e-15);
  // Hand-computed in test_step_cost.cpp: 0.031 ms on 1 GPU, 0.0516 ms on 2.
  EXPECT_NEAR(grid[1].step.step_ms, 0.0516, 1e-15);
  EXPECT_NEAR(grid[1].speedup, 0.031 / 0.0516, 1e-12);
  EXPECT_NEAR(grid[1].throughput, 32 / 0.0516e-3, 1e-6);
}

// The grid's table gives each term's source a column of its own, headed, after the speedup's.
TEST_F(PredictTest, TheGridTableHasAColumnPerSource) {
  options_.layer_widths = fixture::kWidths;
  options_.batches = {32};
  options_.gpus = {1, 2};
  options_.format = Format::markdown;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("| speedup | ceiling | GEMMs | all-reduce |"), std::string::npos) << text;
  // The ceiling, step(1 GPU, 32) / step(1 GPU, 16) = 0.0310 / 0.0230, after the speedup; none on one GPU.
  EXPECT_NE(text.find("| 0.601 | 1.348 | measured | extrapolated |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 1.000 | — | interpolated | — |"), std::string::npos) << text;
  // Every phase in ms to four places, the throughput whole, in the columns' order.
  EXPECT_NE(text.find("\n| 2 | 32 | 0.0160 | 0.0225 | 0.0106 | 0.0106 | 0.0005 | 0.0516 | 620,155 | 0.601 |"),
            std::string::npos)
      << text;
}

// A global batch in the thousands is grouped as the throughput is.
TEST_F(PredictTest, TheGridTableGroupsTheBatchsThousands) {
  options_.layer_widths = fixture::kWidths;
  options_.batches = {4096};
  options_.gpus = {1};
  options_.format = Format::markdown;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("\n| 1 | 4,096 | "), std::string::npos) << text;
}

// The recommendation says each GPU count's break-even in the measured curves' words (stats/break_even.hpp).
TEST_F(PredictTest, TheRecommendationSaysTheBreakEven) {
  options_.layer_widths = fixture::kWidths;
  options_.batches = {1024, 4096};
  options_.gpus = {1, 2};
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("for 16-8-3 on this machine, 2 GPUs, break-even: none (speedup >= 1 from 1024 to 4096)\n"),
            std::string::npos)
      << text;
}

TEST_F(PredictTest, CheckOfTheModelsOwnTimesHasNoError) {
  const std::string results = dir_ + "/measured.h5";
  {
    ResultsWriter writer(results, false);
    add(writer, "one", 1, true, 0.031);
    add(writer, "two", 2, false, 0.0516);
    writer.close();
  }
  const CheckSummary summary = check_predictions(options_, read_results_file(results));
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_NEAR(summary.rows[0].predicted_step_ms, 0.031, 1e-15);
  EXPECT_NEAR(summary.rows[1].measured_step_ms, 0.0516, 1e-15);
  EXPECT_NEAR(summary.median_abs_step_error, 0, 1e-12);
  EXPECT_NEAR(summary.worst_abs_step_error, 0, 1e-12);
  EXPECT_FALSE(summary.rows[0].has_speedup);  // the baseline itself
  ASSERT_TRUE(summary.rows[1].has_speedup);
  EXPECT_EQ(summary.speedups, 1);
  EXPECT_NEAR(summary.rows[1].measured_speedup, 0.031 / 0.0516, 1e-12);
  EXPECT_NEAR(summary.worst_abs_speedup_error, 0, 1e-12);
}

// A file of 1-GPU configurations only has no speedup to check: no speedup line under the table.
TEST_F(PredictTest, CheckWithoutSpeedupsSummarisesStepsOnly) {
  const std::string results = dir_ + "/single.h5";
  {
    ResultsWriter writer(results, false);
    add(writer, "one", 1, true, 0.031);
    writer.close();
  }
  const CheckSummary summary = check_predictions(options_, read_results_file(results));
  EXPECT_EQ(summary.speedups, 0);
  const std::string text = render_terminal(check_table(summary));
  EXPECT_NE(text.find("step: median |error|"), std::string::npos) << text;
  EXPECT_EQ(text.find("speedup: median"), std::string::npos) << text;
}

// Where the predicted speedup crosses 1 between two batches (0.601 at 32, above 1 at 4096), the break-even table
// gives the batch; where it does not, the cell is empty.
TEST_F(PredictTest, TheBreakEvenTableGivesTheCrossingsBatch) {
  options_.layer_widths = fixture::kWidths;
  options_.batches = {32, 4096};
  options_.gpus = {1, 2};
  options_.format = Format::markdown;
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string text = testing::internal::GetCapturedStdout();
  const std::size_t table = text.find("Break-even global batch per GPU count (predicted)");
  ASSERT_NE(table, std::string::npos) << text;
  const std::size_t row = text.find("\n| 2 | ", table);
  ASSERT_NE(row, std::string::npos) << text;
  EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(text[row + 7]))) << text.substr(row, 80);
  options_.batches = {4096, 8192};  // above 1 at both: no crossing, no batch (a dash)
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string paying = testing::internal::GetCapturedStdout();
  const std::size_t paying_row = paying.find("\n| 2 | — |", paying.find("Break-even global batch"));
  EXPECT_NE(paying_row, std::string::npos) << paying;
}

TEST_F(PredictTest, CheckLeavesOutWhatTheModelDoesNotDescribe) {
  const std::string results = dir_ + "/mixed.h5";
  {
    ResultsWriter writer(results, false);
    add(writer, "one", 1, true, 0.031);
    ConfigurationMetadata cpu = synthetic_metadata("cpu", 1);
    cpu.device = "cpu";
    ResultsWriter::Configuration c = writer.add_configuration(cpu);
    writer.append_run(c, {synthetic_record({{0, 0, 0, 0, 0, 1.0}, {0, 0, 0, 0, 0, 1.0}}, 0, 0, 0)});
    // A step the cost model has no terms for: two steps per update.
    ConfigurationMetadata m = synthetic_metadata("accumulated", 2);
    m.configuration.training.model.widths = fixture::kWidths;
    m.configuration.training.accumulate_steps = 2;
    ResultsWriter::Configuration shown = writer.add_configuration(m);
    const std::vector<double> phases = {0, 0, 0, 0, 0, 0.051};
    writer.append_run(shown, std::vector<RunRecord>(2, synthetic_record({phases, phases}, 0, 0, 0)));
    writer.close();
  }
  testing::internal::CaptureStderr();
  const CheckSummary summary = check_predictions(options_, read_results_file(results));
  const std::string notes = testing::internal::GetCapturedStderr();
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].name, "one");
  EXPECT_NE(notes.find("'accumulated' (mgpu_bench, cuda, accumulate 2) is not an mgpu_bench CUDA step of one update; "
                       "left out"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("'cpu' (mgpu_bench, cpu, accumulate 1)"), std::string::npos) << notes;
}

// The sharded optimizer's configurations are predicted with its collectives (test_step_cost.cpp: 0.05478 ms).
TEST_F(PredictTest, CheckPredictsTheShardedOptimizersStep) {
  const std::string results = dir_ + "/sharded.h5";
  {
    ResultsWriter writer(results, false);
    add(writer, "replicated", 2, false, 0.0516);
    ConfigurationMetadata m = synthetic_metadata("sharded", 2);
    m.configuration.training.model.widths = fixture::kWidths;
    m.configuration.training.global_batch = 32;
    m.local_batch = 16;
    m.configuration.training.graph = true;
    m.configuration.training.fused_optimizer = false;
    m.configuration.training.optimizer_sharding = true;
    ResultsWriter::Configuration c = writer.add_configuration(m);
    const std::vector<double> phases = {0, 0, 0, 0, 0, 0.05478};
    writer.append_run(c, std::vector<RunRecord>(2, synthetic_record({phases, phases}, 0, 0, 0)));
    writer.close();
  }
  const CheckSummary summary = check_predictions(options_, read_results_file(results));
  ASSERT_EQ(summary.rows.size(), 2u);
  EXPECT_NEAR(summary.rows[0].predicted_step_ms, 0.0516, 1e-15);
  EXPECT_EQ(summary.rows[1].name, "sharded");
  EXPECT_NEAR(summary.rows[1].predicted_step_ms, 0.05478, 1e-15);
  EXPECT_NEAR(summary.worst_abs_step_error, 0, 1e-12);
}

TEST_F(PredictTest, CheckReportsTheRelativeErrorOfEachConfiguration) {
  const std::string results = dir_ + "/slower.h5";
  {
    ResultsWriter writer(results, false);
    add(writer, "one", 1, true, 0.03875);  // predicted 0.031: -20%
    add(writer, "two", 2, false, 0.0516);  // predicted 0.0516: 0%
    writer.close();
  }
  const CheckSummary summary = check_predictions(options_, read_results_file(results));
  EXPECT_NEAR(summary.rows[0].step_error, -0.2, 1e-12);
  EXPECT_NEAR(summary.median_abs_step_error, 0.1, 1e-12);
  EXPECT_NEAR(summary.worst_abs_step_error, 0.2, 1e-12);
  // Measured speedup 0.03875 / 0.0516, predicted 0.031 / 0.0516: -20%.
  EXPECT_NEAR(summary.rows[1].speedup_error, -0.2, 1e-12);
  // On the terminal the configuration's name is text, left-aligned under its header.
  const std::string text = render_terminal(check_table(summary));
  EXPECT_NE(text.find("\n  configuration  GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  one            "), std::string::npos) << text;
  // Steps to four places, errors to one, speedups to three, each under its header.
  EXPECT_NE(
      text.find("\n  two               2     32          0.0516         0.0516      0.0              0.601             "
                "0.751    -20.0\n"),
      std::string::npos)
      << text;
  // One speedup is a summary too.
  EXPECT_NE(text.find("speedup: median |error| 20.0%, worst 20.0% over 1 configurations"), std::string::npos) << text;
}
