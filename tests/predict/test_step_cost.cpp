// Purpose: tests of the step cost model's terms against hand-computed values on the synthetic probe of
// step_cost_fixture.hpp (read back from a file written by the results writer): GEMM interpolation and its
// boundaries, memory passes and their floor, and whole steps on 1, 2 and 4 ranks with and without overlap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/mlp_spec.hpp"
#include "platform/error.hpp"
#include "predict/step_cost.hpp"
#include "predict/step_cost_fixture.hpp"
#include "results/results_reader.hpp"

using namespace mgpu;
using namespace mgpu::predict;
namespace fixture = mgpu::step_cost_test;

namespace {

class StepCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_step_cost_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    const std::string file = dir_ + "/probe.h5";
    fixture::write_probe_and_sweep(file);
    rates_ = probe_rates(read_hardware_probe(file), Precision::fp32);
    curve_ = allreduce_curve(read_allreduce_sweep(file));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  double gemm(GemmKind kind, int in, int out, long long batch, TermSource expected) const {
    TermSource source = TermSource::measured;
    const double ms = gemm_ms(rates_, kind, in, out, batch, &source);
    EXPECT_EQ(term_source_name(source), std::string(term_source_name(expected))) << in << "x" << out << " b" << batch;
    return ms;
  }
  StepCostModel model() const { return StepCostModel(rates_, {curve_}, std::nullopt, false); }

  std::string dir_;
  ProbeRates rates_;
  AllreduceCurve curve_;
};

const MlpSpec kMlp = custom_model(fixture::kWidths, 0.0);
// The step's all-reduce: the sweep's (or the link's) time for the same bytes x 1.06 (step_cost.cpp).
constexpr double kInStep = 1.06;

}  // namespace

TEST_F(StepCostTest, ProbeRatesReadTheFile) {
  EXPECT_EQ(rates_.gemms.size(), 10u);
  EXPECT_NEAR(rates_.peak_gemm_tflops, 20.0, 1e-9);
  EXPECT_DOUBLE_EQ(rates_.graph_node_ms, 0.0005);
  EXPECT_DOUBLE_EQ(rates_.graph_launch_ms, 0.002);
  EXPECT_THROW(probe_rates(fixture::probe(), Precision::tf32), UsageError);
}

// The launch costs are found by label, wherever each stands: the graph node's first, the kernel launch's last.
TEST_F(StepCostTest, LaunchCostsAreReadByLabelInAnyOrder) {
  results_schema::HardwareProbe probe = fixture::probe();
  probe.launch_labels = {"graph_node", "graph_launch", "kernel_launch"};
  probe.launch_ms.values = {0.0005, 0.002, 0.003};
  const ProbeRates rates = probe_rates(probe, Precision::fp32);
  EXPECT_DOUBLE_EQ(rates.graph_node_ms, 0.0005);
  EXPECT_DOUBLE_EQ(rates.graph_launch_ms, 0.002);
}

// A GEMM's time is its median over the probe's runs, the first axis of gemm_ms, whatever the number of precisions,
// the second: 3 runs of fp32 and bf16, fp32's L0 forward at batch 16 timed 0.010, 0.030 and 0.015 ms.
TEST_F(StepCostTest, EachGemmIsItsMedianOverTheProbesRuns) {
  results_schema::HardwareProbe probe = fixture::probe();
  const std::size_t gemms = probe.gemm_labels.size(), precisions = 2, runs = 3;
  probe.runs = runs;
  probe.gemm_precisions = {"fp32", "bf16"};
  probe.gemm_ms.shape = {runs, precisions, gemms};
  probe.gemm_ms.values.assign(runs * precisions * gemms, 0.5);
  const double l0_forward_b16[] = {0.010, 0.030, 0.015};
  for (std::size_t run = 0; run < runs; ++run) probe.gemm_ms.values[run * precisions * gemms] = l0_forward_b16[run];
  TermSource source = TermSource::estimated;
  EXPECT_DOUBLE_EQ(gemm_ms(probe_rates(probe, Precision::fp32), GemmKind::forward, 16, 8, 16, &source), 0.015);
  EXPECT_EQ(source, TermSource::measured);
}

// tf32x3 runs three TF32 products per GEMM, so its rates are the probe's tf32 ones with every GEMM three times as long
// (the peak a third); and each kernel that writes a GEMM operand writes its split too: 2 floats more per value.
TEST_F(StepCostTest, Tf32x3IsThreeTf32GemmsAndTheSplitsTraffic) {
  results_schema::HardwareProbe probe = fixture::probe();
  const std::size_t gemms = probe.gemm_labels.size();
  probe.gemm_precisions = {"fp32", "tf32"};
  probe.gemm_ms.shape = {1, 2, gemms};
  std::vector<double> tf32_ms;
  for (std::size_t g = 0; g < gemms; ++g) tf32_ms.push_back(probe.gemm_ms.values[g] / 8);  // tf32: 8x fp32's rate
  probe.gemm_ms.values.insert(probe.gemm_ms.values.end(), tf32_ms.begin(), tf32_ms.end());
  const ProbeRates tf32 = probe_rates(probe, Precision::tf32);
  const ProbeRates tf32x3 = probe_rates(probe, Precision::tf32x3);
  EXPECT_EQ(tf32x3.precision, Precision::tf32x3);
  ASSERT_EQ(tf32x3.gemms.size(), tf32.gemms.size());
  for (std::size_t g = 0; g < tf32.gemms.size(); ++g) EXPECT_DOUBLE_EQ(tf32x3.gemms[g].ms, 3 * tf32.gemms[g].ms);
  EXPECT_NEAR(tf32x3.peak_gemm_tflops, tf32.peak_gemm_tflops / 3, 1e-9);
  EXPECT_NEAR(tf32.peak_gemm_tflops, 160.0, 1e-9);
  // A batch large enough that every pass is far above the graph node's floor: forward's elementwise passes move
  // (2 + 2) floats per hidden output and (3 + 2) per loss value, Adam (7 + 2) per parameter.
  constexpr long long kBatch = 1LL << 22;
  const StepCostModel model(tf32x3, {curve_}, std::nullopt, false);
  const Configuration settings = default_gpu_configuration(kMlp, 1, kBatch, Precision::tf32x3);
  ASSERT_FALSE(settings.training.fused_optimizer);
  const StepPrediction p = model.predict(settings);
  TermSource source = TermSource::measured;
  EXPECT_NEAR(
      p.forward_ms,
      gemm_ms(tf32x3, GemmKind::forward, 16, 8, kBatch, &source) + memory_pass_ms(tf32x3, 4.0 * 4 * kBatch * 8) +
          gemm_ms(tf32x3, GemmKind::forward, 8, 3, kBatch, &source) + memory_pass_ms(tf32x3, 5.0 * 4 * kBatch * 3),
      1e-12);
  // Adam over a million parameters (far above the node's floor; its layers' GEMMs estimated from the peak).
  const MlpSpec wide = custom_model({1000, 1000, 3}, 0.0);
  const double parameters = double(wide.parameter_count());
  const double adam_ms = model.predict(default_gpu_configuration(wide, 1, 128, Precision::tf32x3)).optimizer_ms;
  EXPECT_NEAR(adam_ms, memory_pass_ms(tf32x3, 9.0 * 4 * parameters), 1e-15);
  EXPECT_GT(adam_ms, memory_pass_ms(tf32x3, 7.5 * 4 * parameters));
  EXPECT_THROW(probe_rates(fixture::probe(), Precision::tf32x3), UsageError);  // no tf32 GEMMs probed
}

TEST_F(StepCostTest, GemmAtAMeasuredBatchIsTheMeasurement) {
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 16, TermSource::measured), 0.010);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::weight_grad, 16, 8, 64, TermSource::measured), 0.030);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::input_grad, 8, 3, 64, TermSource::measured), 0.010);
}

TEST_F(StepCostTest, GemmBetweenMeasuredBatchesIsLinearInBatch) {
  // 40 is half way from 16 to 64: 0.010 + (0.022 - 0.010) / 2.
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 40, TermSource::interpolated), 0.016, 1e-15);
  EXPECT_NEAR(gemm(GemmKind::weight_grad, 16, 8, 17, TermSource::interpolated), 0.012 + 0.018 / 48, 1e-15);
}

TEST_F(StepCostTest, GemmBelowTheProbedBatchesIsClampedAboveItScalesWithBatch) {
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 8, TermSource::extrapolated), 0.010);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 16, 8, 15, TermSource::extrapolated), 0.010);
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 65, TermSource::extrapolated), 0.022 * 65 / 64, 1e-15);
  EXPECT_NEAR(gemm(GemmKind::forward, 16, 8, 128, TermSource::extrapolated), 0.044, 1e-15);
}

TEST_F(StepCostTest, ASmallerBatchIsNeverSlowerThanALargerOne) {
  // A layer whose batch-16 time (0.05) is slower than its batch-64 time (0.02): 16 and everything below it take 0.02.
  rates_.gemms.push_back({GemmKind::forward, 4, 4, 16, 0.05});
  rates_.gemms.push_back({GemmKind::forward, 4, 4, 64, 0.02});
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 16, TermSource::measured), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 8, TermSource::extrapolated), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 40, TermSource::interpolated), 0.02);
  EXPECT_DOUBLE_EQ(gemm(GemmKind::forward, 4, 4, 128, TermSource::extrapolated), 0.04);
}

TEST_F(StepCostTest, GemmOfAnUnprobedLayerComesFromThePeakRate) {
  // 2 x 32 x 32 x 10 FLOP at 20 TFLOP/s.
  EXPECT_NEAR(gemm(GemmKind::forward, 32, 32, 10, TermSource::estimated), 20480 / 20e12 * 1e3, 1e-18);
}

TEST_F(StepCostTest, MemoryPassUsesTheCopyBandwidthAtItsSizeAndTheGraphNodeFloor) {
  EXPECT_NEAR(memory_pass_ms(rates_, 2e6), 0.001, 1e-15);      // copies 1e6 bytes: 2 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 2e8), 0.05, 1e-15);       // copies 1e8 bytes: 4 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 2e7), 2e7 / 3e9, 1e-15);  // log midpoint: 3 TB/s
  EXPECT_NEAR(memory_pass_ms(rates_, 4e8), 0.1, 1e-15);        // above the largest copy: its bandwidth
  EXPECT_DOUBLE_EQ(memory_pass_ms(rates_, 1024), 0.0005);      // 5e-7 ms of traffic: the graph node's floor
}

// At a batch whose activations outgrow the graph node's floor, each layer's elementwise passes move batch x fan_out
// floats: bias + ReLU 2 per output of the hidden layer, the loss 3 per output of the last (4 bytes each).
TEST_F(StepCostTest, ElementwiseTrafficGrowsWithBatchTimesWidth) {
  constexpr long long kBatch = 1LL << 22;
  const StepPrediction p = model().predict(default_gpu_configuration(kMlp, 1, kBatch, Precision::fp32));
  const double hidden = memory_pass_ms(rates_, 2.0 * 4 * kBatch * 8),
               loss = memory_pass_ms(rates_, 3.0 * 4 * kBatch * 3);
  EXPECT_GT(hidden, 10 * memory_pass_ms(rates_, 1));  // far above the node's floor
  EXPECT_NEAR(p.forward_ms,
              gemm(GemmKind::forward, 16, 8, kBatch, TermSource::extrapolated) + hidden +
                  gemm(GemmKind::forward, 8, 3, kBatch, TermSource::extrapolated) + loss,
              1e-12);
}

TEST_F(StepCostTest, OneGpuSmallBatchFusesTheWeightGradientsIntoTheOptimizer) {
  const Configuration settings = default_gpu_configuration(kMlp, 1, 16, Precision::fp32);
  EXPECT_TRUE(settings.training.fused_optimizer);
  const StepPrediction p = model().predict(settings);
  // forward: 0.010 + node (bias+ReLU) + 0.005 + node (loss); backward: L1 input gradient 0.004 + node (mask);
  // optimizer: the fused pass, 6 x 4 x 160 bytes and 2 x 152 x 16 FLOP: the node's floor; graph launch 0.002.
  EXPECT_NEAR(p.forward_ms, 0.016, 1e-15);
  EXPECT_NEAR(p.backward_ms, 0.0045, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.0005, 1e-15);
  EXPECT_EQ(p.allreduce_ms, 0.0);
  EXPECT_NEAR(p.step_ms, 0.023, 1e-15);
  // Without the graph there is no graph launch (and every kernel keeps the node floor).
  Configuration eager = settings;
  eager.training.graph = false;
  EXPECT_NEAR(model().predict(eager).step_ms, 0.021, 1e-15);
}

TEST_F(StepCostTest, FusedOptimizerIsItsTrafficOrItsWeightGradientFlopsWhicheverIsSlower) {
  // 1e6 weights at batch 10,000: 2e10 FLOP at 20 TFLOP/s = 1 ms, above the 24e6 bytes' traffic.
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 10000), 1.0, 1e-12);
  // At batch 1 the traffic: 24e6 bytes at the bandwidth of a 1.2e7-byte copy (log-interpolated from 2 to 4 TB/s).
  const double bytes_per_ms = 2e9 + std::log(12.0) / std::log(100.0) * 2e9;
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 1), 24e6 / bytes_per_ms, 1e-12);
  // Any positive peak rate counts, however slow: at 1 TFLOP/s the FLOPs take 20 ms; with none probed, the traffic.
  rates_.peak_gemm_tflops = 1;
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 10000), 20.0, 1e-12);
  rates_.peak_gemm_tflops = 0;
  EXPECT_NEAR(fused_optimizer_ms(rates_, 1e6, 1e6, 10000), 24e6 / bytes_per_ms, 1e-12);
}

// Unfused, Adam reads the parameter, its gradient and both moments and writes all but the gradient: 7 floats a
// parameter, which at a million parameters is far above the graph node's floor.
TEST_F(StepCostTest, UnfusedAdamMovesSevenFloatsPerParameter) {
  const MlpSpec wide = custom_model({1000, 1000, 3}, 0.0);
  const Configuration settings = default_gpu_configuration(wide, 2, 128, Precision::fp32);
  ASSERT_FALSE(settings.training.fused_optimizer);
  const StepPrediction p = model().predict(settings);
  EXPECT_NEAR(p.optimizer_ms, memory_pass_ms(rates_, 7.0 * 4 * double(wide.parameter_count())), 1e-15);
  EXPECT_GT(p.optimizer_ms, 10 * memory_pass_ms(rates_, 1));
}

TEST_F(StepCostTest, FusedOptimizerOnlyOnOneGpuFp32UpToTheResolversWeightGradientWork) {
  // The resolver's rule (config/resolver.hpp): large's 6,882,048 dense weights up to a local batch of 290.
  const MlpSpec large = preset_model("large");
  EXPECT_TRUE(default_gpu_configuration(large, 1, 290, Precision::fp32).training.fused_optimizer);
  EXPECT_FALSE(default_gpu_configuration(large, 1, 291, Precision::fp32).training.fused_optimizer);
  EXPECT_FALSE(default_gpu_configuration(kMlp, 1, 16, Precision::bf16).training.fused_optimizer);
  EXPECT_FALSE(default_gpu_configuration(kMlp, 2, 32, Precision::fp32).training.fused_optimizer);
  EXPECT_THROW(default_gpu_configuration(kMlp, 4, 6, Precision::fp32), UsageError);
  EXPECT_THROW(default_gpu_configuration(kMlp, 0, 8, Precision::fp32), UsageError);
}

TEST_F(StepCostTest, OverlapByDefaultFromFourGpusAtALocalBatchOf1024) {
  EXPECT_TRUE(default_gpu_configuration(kMlp, 4, 4096, Precision::fp32).training.overlap);
  EXPECT_TRUE(default_gpu_configuration(kMlp, 8, 8192, Precision::bf16).training.overlap);
  EXPECT_FALSE(default_gpu_configuration(kMlp, 4, 4092, Precision::fp32).training.overlap);  // local batch 1023
  EXPECT_FALSE(
      default_gpu_configuration(kMlp, 3, 3072, Precision::fp32).training.overlap);  // 3 GPUs at a local batch of 1024
  EXPECT_FALSE(default_gpu_configuration(kMlp, 2, 4096, Precision::fp32).training.overlap);
  EXPECT_FALSE(default_gpu_configuration(kMlp, 1, 4096, Precision::fp32).training.overlap);
}

TEST_F(StepCostTest, TwoGpusAddTheMeasuredAllReduceAfterBackward) {
  const StepPrediction p = model().predict(default_gpu_configuration(kMlp, 2, 32, Precision::fp32));
  // Local batch 16, unfused: backward 0.0045 + weight gradients 0.018; Adam a node; 640 gradient bytes are below the
  // sweep's 1,000: its 0.01 ms, in the step 1.06 x that.
  EXPECT_NEAR(p.backward_ms, 0.0225, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.0005, 1e-15);
  EXPECT_NEAR(p.allreduce_ms, kInStep * 0.01, 1e-15);
  EXPECT_NEAR(p.exposed_comm_ms, kInStep * 0.01, 1e-15);
  EXPECT_EQ(p.allreduce_source, TermSource::extrapolated);
  EXPECT_NEAR(p.step_ms, 0.0516, 1e-15);
  // The 1-GPU step at batch 32 (fused, a third of the way from 16 to 64): 0.022 + 0.0065 + 0.0005 + 0.002.
  EXPECT_NEAR(model().predict(default_gpu_configuration(kMlp, 1, 32, Precision::fp32)).step_ms, 0.031, 1e-15);
}

TEST_F(StepCostTest, FourGpusUseTheAlphaBetaModelWithTheLinkOfTheTwoRankSweep) {
  const StepPrediction p = model().predict(default_gpu_configuration(kMlp, 4, 64, Precision::fp32));
  // alpha 5 us, beta 1e5 / 0.09e-3 B/s; 640 bytes on 4 ranks: tree 4 alpha + 2 S / beta beats ring 6 alpha + ...
  const double beta = 1e5 / 0.09e-3;
  EXPECT_NEAR(p.allreduce_ms, kInStep * (0.02 + 2 * 640 / beta * 1e3), 1e-12);
  EXPECT_EQ(p.allreduce_source, TermSource::estimated);
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + p.allreduce_ms + 0.0005 + 0.002, 1e-12);
}

TEST_F(StepCostTest, AStatedLinkReplacesTheSweepForEveryRankCount) {
  const StepCostModel stated(rates_, {curve_}, Link{"ten", 10.0, 5.0, "test"}, true);
  TermSource source = TermSource::measured;
  EXPECT_NEAR(stated.allreduce_ms(1000000, 2, &source), kInStep * 0.11, 1e-12);
  EXPECT_EQ(source, TermSource::estimated);
  const StepCostModel without_link(rates_, {}, std::nullopt, false);
  EXPECT_THROW(without_link.allreduce_ms(640, 2, &source), UsageError);
}

TEST_F(StepCostTest, OverlapHidesTheReductionsBehindTheWeightGradientsAtACostToBackward) {
  Configuration settings = default_gpu_configuration(kMlp, 2, 32, Precision::fp32);
  settings.training.overlap = true;
  settings.training.bucket_mb = 0.0002;  // 200-byte buckets: 640 bytes in 4 buckets of 160
  const StepPrediction p = model().predict(settings);
  EXPECT_NEAR(p.allreduce_ms, 0.0424, 1e-15);     // 4 x the sweep's floor 0.01, x 1.06 in the step
  EXPECT_NEAR(p.exposed_comm_ms, 0.0244, 1e-15);  // less the weight gradients' 0.018 (more than the last bucket)
  // The 0.018 ms hidden behind the weight gradients lengthens backward by 0.85 of it.
  EXPECT_NEAR(p.backward_ms, 0.0225 + 0.85 * 0.018, 1e-15);
  // Adam per bucket beside backward: only the last bucket's quarter of it follows the last reduction.
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + 0.85 * 0.018 + 0.0244 + 0.0005 / 4 + 0.002, 1e-15);
}

TEST_F(StepCostTest, OverlapWithTheUpdateAfterTheLastBucketExposesAllOfAdam) {
  Configuration settings = default_gpu_configuration(kMlp, 2, 32, Precision::fp32);
  settings.training.overlap = true;
  settings.training.bucket_mb = 0.0002;  // as above: 4 buckets of 160 bytes
  settings.training.overlap_update = OverlapUpdate::after_last;
  const StepPrediction p = model().predict(settings);
  EXPECT_NEAR(p.exposed_comm_ms, 0.0244, 1e-15);
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + 0.85 * 0.018 + 0.0244 + 0.0005 + 0.002, 1e-15);
}

TEST_F(StepCostTest, OverlapOfOneBucketHidesNothingAndCostsBackwardNothing) {
  Configuration settings = default_gpu_configuration(kMlp, 2, 32, Precision::fp32);
  settings.training.overlap = true;
  settings.training.bucket_mb = 0.001;  // one bucket of all 640 bytes, which is also the last, reduced after backward
  const StepPrediction p = model().predict(settings);
  EXPECT_NEAR(p.allreduce_ms, 0.0106, 1e-15);
  EXPECT_NEAR(p.exposed_comm_ms, 0.0106, 1e-15);
  EXPECT_NEAR(p.backward_ms, 0.0225, 1e-15);
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + 0.0106 + 0.0005 + 0.002, 1e-15);
}

TEST_F(StepCostTest, ShardedOptimizerReducesScattersUpdatesItsShareAndGathers) {
  Configuration settings = default_gpu_configuration(kMlp, 2, 32, Precision::fp32);
  settings.training.optimizer_sharding = true;
  const StepPrediction p = model().predict(settings);
  // Each collective 0.65 of the 640-byte all-reduce's 0.0106 ms in the step; 160 parameters in two shards of 80, no
  // rest.
  EXPECT_NEAR(p.allreduce_ms, 0.00689, 1e-15);
  EXPECT_NEAR(p.exposed_comm_ms, 0.00689, 1e-15);
  EXPECT_EQ(p.allreduce_source, TermSource::estimated);
  // Adam on half (0.00025 ms) is held at the graph node's 0.0005; then the all-gather.
  EXPECT_NEAR(p.optimizer_ms, 0.0005 + 0.00689, 1e-15);
  EXPECT_NEAR(p.step_ms, 0.016 + 0.0225 + 0.00689 + 0.0005 + 0.00689 + 0.002, 1e-15);
}

TEST_F(StepCostTest, ShardedOptimizerAllReducesTheParametersBeyondEqualShards) {
  Configuration settings =
      default_gpu_configuration(kMlp, 3, 48, Precision::fp32);  // local batch 16, as on 2 ranks at 32
  settings.training.optimizer_sharding = true;
  const StepCostModel m = model();
  const StepPrediction p = m.predict(settings);
  TermSource source = TermSource::measured;
  // 160 parameters in three shards of 53 and one more, all-reduced: 4 bytes.
  const double expected = 0.65 * m.allreduce_ms(640, 3, &source) + m.allreduce_ms(4, 3, &source);
  EXPECT_NEAR(p.exposed_comm_ms, expected, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.0005 + 0.65 * m.allreduce_ms(640, 3, &source), 1e-15);
}

// --- The step's own units (probe version 8): a preset's step composed from them. ---

namespace {

// Medium's units at batch 16 and 64, each worth a distinct value: unit i at batch 16 is (i + 1) us, at batch 64
// twice that; the output head only at 16 (it serves small batches only).
std::map<std::string, double> medium_units(long long batch) {
  const std::vector<std::string>& names = fixture::kMediumChainUnits;
  std::map<std::string, double> units;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "output_head" && batch != 16) continue;
    units[names[i]] = (i + 1) * 1e-3 * (batch == 16 ? 1 : 2);
  }
  return units;
}

class StepUnitsTest : public StepCostTest {
 protected:
  void SetUp() override {
    StepCostTest::SetUp();
    units_ = units_probe("units.h5", true);
  }
  // The probe's rates with medium's units, the output head's only when with_head.
  ProbeRates units_probe(const std::string& name, bool with_head) const {
    results_schema::HardwareProbe probe = fixture::probe();
    std::vector<double> ms;
    for (long long batch : {16, 64})
      for (const auto& [unit_name, value] : medium_units(batch)) {
        if (unit_name == "output_head" && !with_head) continue;
        probe.step_labels.push_back("medium b" + std::to_string(batch) + " " + unit_name);
        ms.push_back(value);
      }
    probe.step_ms = {{1, ms.size()}, ms};
    const std::string file = dir_ + "/" + name;
    write_hardware_probe(file, probe, false);
    return probe_rates(read_hardware_probe(file), Precision::fp32);
  }
  StepCostModel units_model() const { return StepCostModel(units_, {curve_}, std::nullopt, false); }
  static double unit(long long batch, const std::string& name) { return medium_units(batch).at(name); }
  // A fused step without the head: every layer's forward GEMM and the loss, then the fused input gradients down to
  // layer 1, each at the probe's units of batch `probed`.
  static void expect_output_layer_and_loss(const StepPrediction& p, long long probed) {
    EXPECT_NEAR(p.forward_ms,
                unit(probed, "L0 forward") + unit(probed, "L1 forward") + unit(probed, "L2 forward") +
                    unit(probed, "L3 forward") + unit(probed, "loss"),
                1e-15);
    EXPECT_NEAR(
        p.backward_ms,
        unit(probed, "L3 input_grad fused") + unit(probed, "L2 input_grad fused") + unit(probed, "L1 input_grad fused"),
        1e-15);
  }
  ProbeRates units_;
};

const MlpSpec kMedium = preset_model("medium");

}  // namespace

TEST_F(StepUnitsTest, TheProbeFileCarriesTheUnits) {
  ASSERT_EQ(units_.units.size(), 18u + 17u);
  EXPECT_EQ(units_.units.front().model, "medium");
  EXPECT_TRUE(rates_.units.empty());  // a probe without them (the fixture's, as written before version 8)
  EXPECT_EQ(StepCostModel(rates_, {}, std::nullopt, false).probed_preset(kMedium), "");
  EXPECT_EQ(units_model().probed_preset(kMedium), "medium");
  EXPECT_EQ(units_model().probed_preset(custom_model({847, 256, 128, 64, 4}, 0.2)), "");
}

TEST_F(StepUnitsTest, FusedStepWithTheHeadSkipsTheOutputLayersKernels) {
  const StepPrediction p = units_model().predict(default_gpu_configuration(kMedium, 1, 16, Precision::fp32));
  const double forward =
      unit(16, "L0 forward") + unit(16, "L1 forward") + unit(16, "L2 forward") + unit(16, "output_head");
  const double backward = unit(16, "L2 input_grad fused") + unit(16, "L1 input_grad fused");
  EXPECT_NEAR(p.forward_ms, forward, 1e-15);
  EXPECT_NEAR(p.backward_ms, backward, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, unit(16, "fused_optimizer"), 1e-15);
  EXPECT_NEAR(p.step_ms, forward + backward + unit(16, "fused_optimizer") + 0.002, 1e-15);
  EXPECT_EQ(p.gemm_source, TermSource::measured);
}

TEST_F(StepUnitsTest, FusedStepAboveTheHeadsLargestBatchRunsTheOutputLayerAndLoss) {
  expect_output_layer_and_loss(units_model().predict(default_gpu_configuration(kMedium, 1, 64, Precision::fp32)), 64);
  // Between the probed batches each unit is linear in batch: at 32, a third of the way from 16 to 64.
  const StepPrediction mid = units_model().predict(default_gpu_configuration(kMedium, 1, 32, Precision::fp32));
  EXPECT_NEAR(mid.optimizer_ms, unit(16, "fused_optimizer") * (1 + 1.0 / 3), 1e-15);
  EXPECT_EQ(mid.gemm_source, TermSource::interpolated);
}

// A probe that found no batch the output head serves times none: every fused step, batch 1 included, runs the output
// layer's GEMM and the loss (below the probed batches each unit keeps batch 16's time).
TEST_F(StepUnitsTest, WithoutAHeadInTheProbeEveryFusedStepRunsTheOutputLayerAndLoss) {
  const StepCostModel headless(units_probe("headless.h5", false), {curve_}, std::nullopt, false);
  expect_output_layer_and_loss(headless.predict(default_gpu_configuration(kMedium, 1, 1, Precision::fp32)), 16);
}

TEST_F(StepUnitsTest, UnfusedStepAddsTheWeightGradientsAdamAndTheAllReduce) {
  const StepPrediction p =
      units_model().predict(default_gpu_configuration(kMedium, 2, 128, Precision::fp32));  // local 64
  double backward = 0;
  for (const char* name : {"L3 input_grad", "L2 input_grad", "L1 input_grad", "L0 weight_grad", "L1 weight_grad",
                           "L2 weight_grad", "L3 weight_grad"})
    backward += unit(64, name);
  EXPECT_NEAR(p.backward_ms, backward, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, unit(64, "adam"), 1e-15);
  EXPECT_GT(p.allreduce_ms, 0.0);
  EXPECT_NEAR(p.step_ms, p.forward_ms + backward + p.exposed_comm_ms + unit(64, "adam") + 0.002, 1e-15);
}

TEST_F(StepUnitsTest, AboveTheProbedBatchesUnitsScaleWithTheBatchButAdamDoesNot) {
  const StepPrediction p =
      units_model().predict(default_gpu_configuration(kMedium, 2, 256, Precision::fp32));  // local 128
  EXPECT_NEAR(p.optimizer_ms, unit(64, "adam"), 1e-15);
  double forward = unit(64, "loss");
  for (const char* name : {"L0 forward", "L1 forward", "L2 forward", "L3 forward"}) forward += unit(64, name);
  EXPECT_NEAR(p.forward_ms, 2 * forward, 1e-15);  // every unit's time x 128 / 64, the rate of the largest held
  EXPECT_EQ(p.gemm_source, TermSource::extrapolated);
}

TEST_F(StepUnitsTest, OtherPrecisionsAndModelsKeepTheGemmAndTrafficTerms) {
  // A custom model is composed from GEMMs and traffic as before, whatever units the probe has.
  const StepPrediction custom = units_model().predict(default_gpu_configuration(kMlp, 1, 16, Precision::fp32));
  EXPECT_NEAR(custom.step_ms, 0.023, 1e-15);
}

TEST_F(StepUnitsTest, ALabelThatIsNotModelBatchUnitIsRefused) {
  results_schema::HardwareProbe probe = fixture::probe();
  probe.step_ms = {{1, 1}, {0.001}};
  // No " b", a batch that is not a number, a batch below 1: each refused, naming the label.
  for (const char* label : {"medium L0 forward", "medium bx forward", "medium b0 forward"}) {
    probe.step_labels = {label};
    try {
      probe_rates(probe, Precision::fp32);
      ADD_FAILURE() << label << ": accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(label), std::string::npos) << e.what();
    }
  }
  probe.step_labels = {"medium b16 adam"};
  probe.step_ms = {{1, 1}, {-0.001}};
  EXPECT_THROW(probe_rates(probe, Precision::fp32), UsageError);
}
