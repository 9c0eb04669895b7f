// Purpose: tests of a predicted speedup's error band (analysis/predict_band.hpp): its ends against hand-computed
// values from the grid's own phases, where the cluster model gives the all-reduce (it carries the all-reduce's error)
// and where a measured sweep does (only the step model's); which errors the published tables and a check give; the
// refusal of an error of 100%; the band in predict's output with the archived published tables.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "platform/error.hpp"
#include "predict_band.hpp"
#include "published_table.hpp"
#include "stats/step_model_fixture.hpp"

using namespace mgpu;
using namespace mgpu::analysis;
namespace fixture = mgpu::step_model_test;

namespace {

const std::string kArchive = MGPU_PUBLISHED_TABLES;

class PredictBandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The synthetic probe and 2-rank sweep in one file of its own, nodes of one NIC each.
    options_.probe_path =
        (std::filesystem::temp_directory_path() / ("mgpu_predict_band_" + std::to_string(::getpid()) + ".h5")).string();
    fixture::write_probe_and_sweep(options_.probe_path);
    options_.allreduce_paths = {options_.probe_path};
    options_.link = stats::Link{"test nic", 50.0, 5.0, "test"};
    options_.nics_per_node = 1;
  }
  void TearDown() override { std::filesystem::remove(options_.probe_path); }

  // The grid of the test model at global batch 32 on 1 and 2 GPUs, nodes of `gpus_per_node`, with `band`.
  std::vector<PredictedConfiguration> grid(int gpus_per_node, const ErrorBand& band) {
    options_.gpus_per_node = gpus_per_node;
    const stats::StepModel model = build_step_model(options_, Precision::fp32);
    const MlpSpec mlp = custom_model(fixture::kWidths, 0.0);
    std::vector<PredictedConfiguration> g = predict_grid(model, mlp, {32}, {1, 2}, Precision::fp32);
    add_error_band(g, model, mlp, Precision::fp32, band);
    return g;
  }

  PredictOptions options_;
};

ErrorBand band_of(std::optional<double> allreduce, std::optional<double> speedup) {
  ErrorBand band;
  band.allreduce = allreduce;
  band.speedup = speedup;
  return band;
}

}  // namespace

// 2 GPUs on nodes of 1: the cluster model gives the all-reduce, which the step waits for whole (no overlap at this
// batch), so the low end's step is the step plus the all-reduce x (1 / (1 - a) - 1), the high end's minus
// all-reduce x (1 - 1 / (1 + a)); then the speedup / (1 + s) and / (1 - s).
TEST_F(PredictBandTest, AModelledAllreduceCarriesBothErrors) {
  const std::vector<PredictedConfiguration> g = grid(1, band_of(0.2, 0.1));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].speedup_low, 0.0);  // one GPU: no band
  const PredictedConfiguration& two = g[1];
  ASSERT_EQ(two.step.allreduce_source, stats::TermSource::estimated);
  ASSERT_DOUBLE_EQ(two.step.exposed_comm_ms, two.step.allreduce_ms);
  const double one_ms = two.speedup * two.step.step_ms, reduce = two.step.allreduce_ms;
  EXPECT_NEAR(two.speedup_low, one_ms / (two.step.step_ms + reduce * (1 / 0.8 - 1)) / 1.1, 1e-12);
  EXPECT_NEAR(two.speedup_high, one_ms / (two.step.step_ms - reduce * (1 - 1 / 1.2)) / 0.9, 1e-12);
  EXPECT_LT(two.speedup_low, two.speedup);
  EXPECT_GT(two.speedup_high, two.speedup);
}

// 2 GPUs on one node of 2: the 2-rank sweep gives the all-reduce, so only the step model's error widens it.
TEST_F(PredictBandTest, AMeasuredAllreduceCarriesOnlyTheStepModels) {
  const PredictedConfiguration two = grid(2, band_of(0.2, 0.1))[1];
  ASSERT_EQ(two.step.allreduce_source, stats::TermSource::extrapolated);  // the sweep's, outside its sizes
  EXPECT_NEAR(two.speedup_low, two.speedup / 1.1, 1e-12);
  EXPECT_NEAR(two.speedup_high, two.speedup / 0.9, 1e-12);
  // Without the step model's error the band is the point itself.
  const PredictedConfiguration bare = grid(2, band_of(0.2, std::nullopt))[1];
  EXPECT_DOUBLE_EQ(bare.speedup_low, bare.speedup);
  EXPECT_DOUBLE_EQ(bare.speedup_high, bare.speedup);
}

TEST_F(PredictBandTest, NoBandWithoutAnError) {
  const PredictedConfiguration two = grid(1, ErrorBand{})[1];
  EXPECT_EQ(two.speedup_low, 0.0);
  EXPECT_EQ(two.speedup_high, 0.0);
}

TEST_F(PredictBandTest, AnErrorOf100PercentHasNoUpperEnd) {
  EXPECT_THROW(grid(1, band_of(1.0, 0.1)), UsageError);
  EXPECT_THROW(grid(1, band_of(0.1, 1.0)), UsageError);
  EXPECT_THROW(grid(1, band_of(-0.1, 0.1)), UsageError);
  EXPECT_NO_THROW(grid(1, band_of(0.999, 0.0)));
}

// The published tables give the all-reduce's error only on a cluster and only with a table held out; a check gives
// the step model's where it has speedups.
TEST(PredictBand, WhatGivesEachError) {
  const stats::PublishedTable fitted = read_published_table(kArchive + "/nccl-tests-309.json");
  const stats::PublishedTable held = read_published_table(kArchive + "/nccl-tests-119.json");
  EXPECT_FALSE(error_band_of(true, {fitted}, "", nullptr).allreduce.has_value());
  EXPECT_FALSE(error_band_of(false, {fitted, held}, "", nullptr).allreduce.has_value());
  const ErrorBand both = error_band_of(true, {fitted, held}, "", nullptr);
  ASSERT_TRUE(both.allreduce.has_value());
  EXPECT_NEAR(*both.allreduce, 0.186, 0.001);  // #119's 22 MiB row, the worst of every row of both
  EXPECT_EQ(both.allreduce_judged_on, "nccl-tests #309 (in-sample, 8 rows), nccl-tests #119 (held out, 9 rows)");
  EXPECT_FALSE(both.speedup.has_value());
  CheckSummary check;
  check.speedups = 0;
  EXPECT_FALSE(error_band_of(false, {}, "grid.h5", &check).speedup.has_value());
  check.speedups = 20;
  check.worst_abs_speedup_error = 0.098;
  const ErrorBand checked = error_band_of(false, {}, "grid.h5", &check);
  EXPECT_DOUBLE_EQ(*checked.speedup, 0.098);
  EXPECT_EQ(checked.speedup_judged_on, "--check grid.h5 (20 speedups)");
}

TEST(PredictBand, TheTableSaysWhatItCarriesAndWhatIsMissing) {
  ErrorBand band = band_of(0.186, std::nullopt);
  band.allreduce_judged_on = "t";
  const Table table = error_band_table(band, true);
  EXPECT_EQ(table.key, "error_band");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(table.rows[0][0]), "all-reduce (the cluster model's)");
  EXPECT_NEAR(std::get<double>(table.rows[0][1]), 18.6, 1e-12);
  std::string notes;
  for (const std::string& note : table.notes) notes += note + "\n";
  EXPECT_NE(notes.find("not carried: the step model's error"), std::string::npos) << notes;
  EXPECT_EQ(notes.find("not carried: the all-reduce"), std::string::npos) << notes;
  const Table without = error_band_table(band_of(std::nullopt, 0.05), true);
  ASSERT_EQ(without.rows.size(), 1u);
  EXPECT_EQ(std::get<std::string>(without.rows[0][0]), "speedup (the step model's)");
  std::string missing;
  for (const std::string& note : without.notes) missing += note + "\n";
  EXPECT_NE(missing.find("not carried: the all-reduce model's error"), std::string::npos) << missing;
}

// predict with a cluster and the archived tables prints each speedup with its band and the band's table.
TEST_F(PredictBandTest, PredictPrintsTheBand) {
  options_.gpus_per_node = 1;
  options_.layer_widths = fixture::kWidths;
  options_.batches = {32};
  options_.gpus = {1, 2};
  options_.published_paths = {kArchive + "/nccl-tests-309.json", kArchive + "/nccl-tests-119.json"};
  options_.format = Format::markdown;
  const PredictedConfiguration two = grid(1, error_band_of(true,
                                                           {read_published_table(options_.published_paths[0]),
                                                            read_published_table(options_.published_paths[1])},
                                                           "", nullptr))[1];
  char cell[64];
  std::snprintf(cell, sizeof cell, "| %.3f [%.3f, %.3f] |", two.speedup, two.speedup_low, two.speedup_high);
  testing::internal::CaptureStdout();
  EXPECT_EQ(run_predict(options_), 0);
  const std::string text = testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find(cell), std::string::npos) << cell << "\n" << text;
  EXPECT_NE(text.find("| all-reduce (the cluster model's) | 18.6 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| nccl-tests #119 | held out | 9 | — | -2.5 | 18.6 | 18.6 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| nccl-tests #309 | in-sample | 8 | 7 | -5.0 | 4.6 | 5.0 |"), std::string::npos) << text;
}
