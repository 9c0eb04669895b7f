// Purpose: tests of the step model's terms against hand-computed values on the synthetic probe of
// step_model_fixture.hpp (read back from a file written by the results writer): GEMM interpolation and its
// boundaries, memory passes and their floor, and whole steps on 1, 2 and 4 ranks with and without overlap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "model/mlp_spec.hpp"
#include "platform/error.hpp"
#include "results/results_reader.hpp"
#include "stats/step_model.hpp"
#include "stats/step_model_fixture.hpp"

using namespace mgpu;
using namespace mgpu::analysis;
namespace fixture = mgpu::step_model_test;

namespace {

class StepModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_step_model_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    const std::string file = dir_ + "/probe.h5";
    fixture::write_probe_and_sweep(file);
    rates_ = probe_rates(read_hardware_probe(file), "fp32");
    curve_ = allreduce_curve(read_allreduce_sweep(file));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  double gemm(GemmKind kind, int in, int out, long long batch, TermSource expected) const {
    TermSource source = TermSource::measured;
    const double ms = gemm_ms(rates_, kind, in, out, batch, &source);
    EXPECT_EQ(term_source_name(source), std::string(term_source_name(expected))) << in << "x" << out << " b" << batch;
    return ms;
  }
  StepModel model() const { return StepModel(rates_, {curve_}, std::nullopt, false); }

  std::string dir_;
  ProbeRates rates_;
  AllreduceCurve curve_;
};

const MlpSpec kMlp = custom_model(fixture::kWidths, 0.0);

}  // namespace

TEST_F(StepModelTest, ProbeRatesReadTheFile) {
  EXPECT_EQ(rates_.gemms.size(), 10u);
  EXPECT_NEAR(rates_.peak_gemm_tflops, 20.0, 1e-9);
  EXPECT_DOUBLE_EQ(rates_.graph_node_ms, 0.0005);
  EXPECT_DOUBLE_EQ(rates_.graph_launch_ms, 0.002);
  EXPECT_THROW(probe_rates(fixture::probe(), "tf32"), UsageError);
}

TEST_F(StepModelTest, GemmAtAMeasuredBatchIsTheMeasurement) {
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 16, TermSource::measured), 0.010);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::weight_grad, 16, 8, 64, TermSource::measured), 0.030);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::input_grad, 8, 3, 64, TermSource::measured), 0.010);
}

TEST_F(StepModelTest, GemmBetweenMeasuredBatchesIsLinearInBatch) {
  // 40 is half way from 16 to 64: 0.010 + (0.022 - 0.010) / 2.
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 40, TermSource::interpolated), 0.016, 1e-15);
  EXPECT_NEAR(gemm(GemmKind::weight_grad, 16, 8, 17, TermSource::interpolated), 0.012 + 0.018 / 48, 1e-15);
}

TEST_F(StepModelTest, GemmBelowTheProbedBatchesIsClampedAboveItScalesWithBatch) {
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 8, TermSource::extrapolated), 0.010);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 15, TermSource::extrapolated), 0.010);
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 65, TermSource::extrapolated), 0.022 * 65 / 64, 1e-15);
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 128, TermSource::extrapolated), 0.044, 1e-15);
}

TEST_F(StepModelTest, ASmallerBatchIsNeverSlowerThanALargerOne) {
  // A layer whose batch-16 time (0.05) is slower than its batch-64 time (0.02): 16 and everything below it take 0.02.
  rates_.gemms.push_back({GemmKind::forward, 4, 4, 16, 0.05});
  rates_.gemms.push_back({GemmKind::forward, 4, 4, 64, 0.02});
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 16, TermSource::measured), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 8, TermSource::extrapolated), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 40, TermSource::interpolated), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 128, TermSource::extrapolated), 0.04);
}

TEST_F(StepModelTest, GemmOfAnUnprobedLayerComesFromThePeakRate) {
  // 2 x 32 x 32 x 10 FLOP at 20 TFLOP/s.
  EXPECT_NEAR(gemm(GemmKind::forward, 32, 32, 10, TermSource::estimated), 20480 / 20e12 * 1e3, 1e-18);
}

TEST_F(StepModelTest, MemoryPassUsesTheCopyBandwidthAtItsSizeAndTheGraphNodeFloor) {
  EXPECT_NEAR(memory_pass_ms(rates_, 2e6), 0.001, 1e-15);      // copies 1e6 bytes: 2 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 2e8), 0.05, 1e-15);       // copies 1e8 bytes: 4 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 2e7), 2e7 / 3e9, 1e-15);  // log midpoint: 3 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 4e8), 0.1, 1e-15);        // above the largest copy: its bandwidth
  EXPECT_DOUBLE_EQ(memory_pass_ms(rates_, 1024), 0.0005);      // 5e-7 ms of traffic: the graph node's floor
}

TEST_F(StepModelTest, OneGpuSmallBatchFusesTheWeightGradientsIntoTheOptimizer) {
  const StepSettings settings = default_step_settings(1, 16, "fp32");
  EXPECT_TRUE(settings.fused_optimizer);
  const StepPrediction p = model().predict(kMlp, settings);
  // forward: 0.010 + node (bias+ReLU) + 0.005 + node (loss); backward: L1 input gradient 0.004 + node (mask);
  // optimizer: the fused pass, 6 x 4 x 160 bytes and 2 x 152 x 16 FLOP: the node's floor; graph launch 0.002.
  EXPECT_NEAR(p.forward_ms, 0.016, 1e-15);
  EXPECT_NEAR(p.backward_ms, 0.0045, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.0005, 1e-15);
  EXPECT_EQ(p.allreduce_ms, 0.0);
  EXPECT_NEAR(p.step_ms, 0.023, 1e-15);
  // Without the graph there is no graph launch (and every kernel keeps the node floor).
  StepSettings eager = settings;
  eager.graph = false;
  EXPECT_NEAR(model().predict(kMlp, eager).step_ms, 0.021, 1e-15);
}

TEST_F(StepModelTest, FusedOptimizerIsItsTrafficOrItsWeightGradientFlopsWhicheverIsSlower) {
  // 1e6 weights at batch 10,000: 2e10 FLOP at 20 TFLOP/s = 1 ms, above the 24e6 bytes' traffic.
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 10000), 1.0, 1e-12);
  // At batch 1 the traffic: 24e6 bytes at the bandwidth of a 1.2e7-byte copy (log-interpolated from 2 to 4 TB/s).
  const double bytes_per_ms = 2e9 + std::log(12.0) / std::log(100.0) * 2e9;
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 1), 24e6 / bytes_per_ms, 1e-12);
}

TEST_F(StepModelTest, FusedOptimizerOnlyOnOneGpuFp32UpToLocalBatch64) {
  EXPECT_TRUE(default_step_settings(1, 64, "fp32").fused_optimizer);
  EXPECT_FALSE(default_step_settings(1, 65, "fp32").fused_optimizer);
  EXPECT_FALSE(default_step_settings(1, 16, "bf16").fused_optimizer);
  EXPECT_FALSE(default_step_settings(2, 32, "fp32").fused_optimizer);
  EXPECT_THROW(default_step_settings(4, 6, "fp32"), UsageError);
  EXPECT_THROW(default_step_settings(0, 8, "fp32"), UsageError);
}

TEST_F(StepModelTest, TwoGpusAddTheMeasuredAllReduceAfterBackward) {
  const StepPrediction p = model().predict(kMlp, default_step_settings(2, 32, "fp32"));
  // Local batch 16, unfused: backward 0.0045 + weight gradients 0.018; Adam a node; 640 gradient bytes are below the
  // sweep's 1,000: its 0.01 ms.
  EXPECT_NEAR(p.backward_ms, 0.0225, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.0005, 1e-15);
  EXPECT_NEAR(p.allreduce_ms, 0.01, 1e-15);
  EXPECT_NEAR(p.exposed_comm_ms, 0.01, 1e-15);
  EXPECT_EQ(p.allreduce_source, TermSource::extrapolated);
  EXPECT_NEAR(p.step_ms, 0.051, 1e-15);
  // The 1-GPU step at batch 32 (fused, a third of the way from 16 to 64): 0.022 + 0.0065 + 0.0005 + 0.002.
  EXPECT_NEAR(model().predict(kMlp, default_step_settings(1, 32, "fp32")).step_ms, 0.031, 1e-15);
}

TEST_F(StepModelTest, FourGpusUseTheAlphaBetaModelWithTheLinkOfTheTwoRankSweep) {
  const StepPrediction p = model().predict(kMlp, default_step_settings(4, 64, "fp32"));
  // alpha 5 us, beta 1e5 / 0.09e-3 B/s; 640 bytes on 4 ranks: tree 4 alpha + 2 S / beta beats ring 6 alpha + ...
  const double beta = 1e5 / 0.09e-3;
  EXPECT_NEAR(p.allreduce_ms, 0.02 + 2 * 640 / beta * 1e3, 1e-12);
  EXPECT_EQ(p.allreduce_source, TermSource::estimated);
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + p.allreduce_ms + 0.0005 + 0.002, 1e-12);
}

TEST_F(StepModelTest, AStatedLinkReplacesTheSweepForEveryRankCount) {
  const StepModel stated(rates_, {curve_}, Link{"ten", 10.0, 5.0, "test"}, true);
  TermSource source = TermSource::measured;
  EXPECT_NEAR(stated.allreduce_ms(1000000, 2, &source), 0.11, 1e-12);
  EXPECT_EQ(source, TermSource::estimated);
  const StepModel without_link(rates_, {}, std::nullopt, false);
  EXPECT_THROW(without_link.allreduce_ms(640, 2, &source), UsageError);
}

TEST_F(StepModelTest, OverlapHidesTheReductionsBehindTheWeightGradients) {
  StepSettings settings = default_step_settings(2, 32, "fp32");
  settings.overlap = true;
  settings.bucket_mb = 0.0002;  // 200-byte buckets: 640 bytes in 4 buckets of 160
  const StepPrediction p = model().predict(kMlp, settings);
  EXPECT_NEAR(p.allreduce_ms, 0.04, 1e-15);      // 4 x the sweep's floor 0.01
  EXPECT_NEAR(p.exposed_comm_ms, 0.022, 1e-15);  // 0.04 - weight gradients 0.018 (more than the last bucket's 0.01)
  // Adam per bucket beside backward: only the last bucket's quarter of it follows the last reduction.
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + 0.022 + 0.0005 / 4 + 0.002, 1e-15);
}
