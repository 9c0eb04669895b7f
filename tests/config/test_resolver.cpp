// Purpose: tests of the resolver (config/resolver.hpp): what each back-end can honour, the combinations no back-end
// runs, every "auto" from the GPU count and the local batch, and the settings that only exist with more than one GPU.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "config/resolver.hpp"
#include "model/mlp_spec.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

// The step `request` resolves to for `gpus` GPUs at `global_batch` on CUDA or the CPU fallback.
TrainingSettings resolved(const StepRequest& request, bool cuda_backend = true, int gpus = 2, int global_batch = 64) {
  TrainingSettings settings;
  settings.global_batch = global_batch;
  resolve_step(request, cuda_backend, gpus, settings);
  return settings;
}

std::string refusal(const StepRequest& request, bool cuda_backend) {
  try {
    resolved(request, cuda_backend);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Resolver, GraphOnCudaAndEveryTimingOnBothBackEnds) {
  EXPECT_TRUE(resolved({}).graph);
  EXPECT_FALSE(resolved({}, false).graph);  // auto: off on the CPU, no error
  StepRequest eager;
  eager.graph = Toggle::off;
  EXPECT_FALSE(resolved(eager).graph);
  for (TimingMode timing : {TimingMode::interleaved, TimingMode::events, TimingMode::step, TimingMode::none}) {
    StepRequest request;
    request.timing = timing;
    EXPECT_EQ(resolved(request, false).timing, timing) << setting_name(timing);
  }
  StepRequest accumulating;
  accumulating.accumulate_steps = 4;
  for (bool cuda : {true, false}) {
    const TrainingSettings settings = resolved(accumulating, cuda);
    EXPECT_EQ(settings.accumulate_steps, 4);
    EXPECT_TRUE(settings.starts_accumulation(4) && settings.ends_accumulation(7) && !settings.ends_accumulation(4));
  }
}

TEST(Resolver, TheCpuFallbackRefusesWhatItCannotHonourWithOneLine) {
  const auto with = [](auto change) {
    StepRequest request;
    change(request);
    return request;
  };
  const std::vector<std::pair<StepRequest, std::string>> refused = {
      {with([](StepRequest& r) { r.graph = Toggle::on; }), "--graph on"},
      {with([](StepRequest& r) { r.overlap = Toggle::on; }), "--overlap on"},
      {with([](StepRequest& r) { r.fuse_optimizer = Toggle::on; }), "--fuse-optimizer on: the CPU fallback"},
      {with([](StepRequest& r) { r.precision = Precision::tf32; }), "--precision tf32"},
      {with([](StepRequest& r) { r.precision = Precision::bf16; }), "--precision bf16"},
      {with([](StepRequest& r) { r.precision = Precision::tf32x3; }), "--precision tf32x3"},
      {with([](StepRequest& r) { r.grad_dtype = GradDtype::bf16; }), "--grad-dtype bf16"},
      {with([](StepRequest& r) { r.optimizer_sharding = Toggle::on; }), "--optimizer-sharding on: the CPU fallback"},
      {with([](StepRequest& r) { r.nccl_max_ctas = 1; }), "--nccl-max-ctas 1: the CPU fallback has no NCCL"},
      {with([](StepRequest& r) { r.step_kernel = StepKernel::persistent; }), "--step-kernel persistent: the CPU"},
      {with([](StepRequest& r) { r.step_kernel = StepKernel::chain; }), "--step-kernel chain: the CPU fallback"}};
  for (const auto& [request, needle] : refused) {
    EXPECT_EQ(refusal(request, false).rfind(needle, 0), 0u) << needle << ": " << refusal(request, false);
    EXPECT_EQ(refusal(request, true), "") << needle;
  }
}

TEST(Resolver, CombinationsNoBackEndRunsAreRefusedEverywhere) {
  StepRequest sharded_overlap;
  sharded_overlap.optimizer_sharding = sharded_overlap.overlap = Toggle::on;
  StepRequest sharded_bf16;
  sharded_bf16.optimizer_sharding = Toggle::on;
  sharded_bf16.grad_dtype = GradDtype::bf16;
  StepRequest fused_bf16;
  fused_bf16.fuse_optimizer = Toggle::on;
  fused_bf16.precision = Precision::bf16;
  // tf32x3 with each 1-GPU-or-fp32 option: its precision set on a request with the option on.
  const auto tf32x3_with = [](Toggle StepRequest::*option) {
    StepRequest request;
    request.*option = Toggle::on;
    request.precision = Precision::tf32x3;
    return request;
  };
  StepRequest sharded_tf32x3 = tf32x3_with(&StepRequest::optimizer_sharding);
  const StepRequest fused_tf32x3 = tf32x3_with(&StepRequest::fuse_optimizer);
  EXPECT_EQ(refusal(sharded_overlap, true),
            "--optimizer-sharding on: needs --overlap off (it reduce-scatters after "
            "backward)");
  EXPECT_EQ(refusal(sharded_bf16, true), "--optimizer-sharding on: needs --grad-dtype fp32");
  EXPECT_EQ(refusal(fused_bf16, true), "--fuse-optimizer on: needs --precision fp32 (got bf16)");
  EXPECT_THROW(check_step_request(fused_bf16), UsageError);
  EXPECT_EQ(refusal(sharded_tf32x3, true),
            "--optimizer-sharding on: needs a --precision other than tf32x3 (its weight split is written by Adam, "
            "which updates only this rank's shard)");
  EXPECT_EQ(refusal(fused_tf32x3, true), "--fuse-optimizer on: needs --precision fp32 (got tf32x3)");
  sharded_tf32x3.precision = Precision::tf32;
  EXPECT_EQ(refusal(sharded_tf32x3, true), "");
  // tf32x3 on one GPU at a fused batch: auto leaves the fused optimizer (fp32 only) off.
  StepRequest tf32x3;
  tf32x3.precision = Precision::tf32x3;
  EXPECT_FALSE(resolved(tf32x3, true, 1, 32).fused_optimizer);
  EXPECT_EQ(resolved(tf32x3, true, 1, 32).precision, Precision::tf32x3);
  StepRequest persistent_tf32;
  persistent_tf32.step_kernel = StepKernel::persistent;
  persistent_tf32.precision = Precision::tf32;
  EXPECT_EQ(refusal(persistent_tf32, true), "--step-kernel persistent: needs --precision fp32 (got tf32)");
  for (Precision other : {Precision::bf16, Precision::tf32x3}) {
    persistent_tf32.precision = other;
    EXPECT_EQ(refusal(persistent_tf32, true),
              std::string("--step-kernel persistent: needs --precision fp32 (got ") + setting_name(other) + ")");
  }
  StepRequest persistent_accumulating;
  persistent_accumulating.step_kernel = StepKernel::persistent;
  persistent_accumulating.accumulate_steps = 2;
  EXPECT_EQ(refusal(persistent_accumulating, true), "--step-kernel persistent: needs --accumulate 1 (got 2)");
  // auto and off accept another precision: they resolve to off there.
  for (Toggle toggle : {Toggle::automatic, Toggle::off}) {
    StepRequest request = fused_bf16;
    request.fuse_optimizer = toggle;
    EXPECT_NO_THROW(check_step_request(request));
    EXPECT_FALSE(resolved(request, true, 1, 32).fused_optimizer);
  }
}

TEST(Resolver, OverlapAutoFromFourGpusAtALocalBatchOf1024InTheDeferredOrder) {
  EXPECT_EQ(kOverlapMinGpus, 4);
  EXPECT_EQ(kOverlapMinLocalBatch, 1024);
  EXPECT_TRUE(resolved({}, true, 4, 4096).overlap);
  EXPECT_EQ(resolved({}, true, 4, 4096).overlap_order, WeightGradientOrder::deferred);
  EXPECT_FALSE(resolved({}, true, 4, 4092).overlap);  // local batch 1023
  EXPECT_FALSE(resolved({}, true, 3, 3072).overlap);
  EXPECT_FALSE(resolved({}, true, 2, 2048).overlap);
  EXPECT_FALSE(resolved({}, false, 4, 4096).overlap);  // the CPU fallback: auto is off, not refused
  StepRequest layerwise;
  layerwise.overlap_order = WeightGradientOrder::layerwise;
  EXPECT_FALSE(resolved(layerwise, true, 4, 4096).overlap);  // auto takes only the measured order
  layerwise.overlap = Toggle::on;
  EXPECT_TRUE(resolved(layerwise, true, 4, 4096).overlap);
  EXPECT_EQ(resolved(layerwise, true, 4, 4096).overlap_order, WeightGradientOrder::layerwise);
  EXPECT_EQ(resolved(layerwise, true, 4, 4096).overlap_update, OverlapUpdate::per_bucket);
  layerwise.overlap_update = OverlapUpdate::after_last;
  EXPECT_EQ(resolved(layerwise, true, 4, 4096).overlap_update, OverlapUpdate::after_last);
  StepRequest sharded;
  sharded.optimizer_sharding = Toggle::on;
  EXPECT_FALSE(resolved(sharded, true, 4, 4096).overlap);
  EXPECT_TRUE(resolved(sharded, true, 4, 4096).optimizer_sharding);
}

// Whether the default request (or `request`) fuses the optimizer for `model` on `gpus` GPUs at `global_batch`.
bool fused(const char* model, int gpus, int global_batch, const StepRequest& request = {}) {
  TrainingSettings settings;
  settings.model = preset_model(model);
  settings.global_batch = global_batch;
  resolve_step(request, true, gpus, settings);
  return settings.fused_optimizer;
}

TEST(Resolver, FusedOptimizerAutoOnOneGpuInFp32UpToTheBatchAndTheWeightGradientWork) {
  EXPECT_EQ(kFusedOptimizerMostWeightSamples, 2'000'000'000);
  EXPECT_EQ(kFusedOptimizerMostLocalBatch, 1024);
  // medium's 257,984 dense weights up to the batch bound, a local batch of 1,024; large's 6,882,048 up to the work
  // bound, 290.
  EXPECT_TRUE(fused("medium", 1, 1024));
  EXPECT_FALSE(fused("medium", 1, 1025));
  EXPECT_TRUE(fused("large", 1, 290));
  EXPECT_FALSE(fused("large", 1, 291));
  EXPECT_TRUE(fused("large", 1, 128));
  EXPECT_FALSE(fused("medium", 2, 128));  // more GPUs: the gradient is reduced between the GEMMs and Adam
  StepRequest tf32;
  tf32.precision = Precision::tf32;
  EXPECT_FALSE(fused("medium", 1, 32, tf32));
  // tf32x3: its weight split is written by the unfused Adam (the fused kernel writes fp32 weights only), so auto
  // leaves it off where fp32 fuses.
  StepRequest tf32x3;
  tf32x3.precision = Precision::tf32x3;
  EXPECT_TRUE(fused("medium", 1, 128));
  EXPECT_FALSE(fused("medium", 1, 128, tf32x3));
  EXPECT_FALSE(fused("large", 1, 128, tf32x3));
  StepRequest on;
  on.fuse_optimizer = Toggle::on;
  EXPECT_TRUE(fused("large", 1, 4096, on));  // on overrides the work limit
  EXPECT_FALSE(fused("medium", 2, 64, on));  // more GPUs: recorded off, also when asked for
  StepRequest off;
  off.fuse_optimizer = Toggle::off;
  EXPECT_FALSE(fused("medium", 1, 32, off));
}

// The persistent step kernel: one GPU, fp32, no accumulation; auto only where set-up can time the replayed graph.
// Elsewhere the chain, also when persistent was asked for with more GPUs (recorded chain, as the fused optimizer is
// recorded off).
TEST(Resolver, StepKernelPersistentOrAutoOnlyOnOneGpuInFp32WithoutAccumulation) {
  EXPECT_EQ(resolved({}, true, 1, 64).step_kernel, StepKernel::automatic);
  EXPECT_EQ(resolved({}, true, 2, 64).step_kernel, StepKernel::chain);
  EXPECT_EQ(resolved({}, false, 1, 64).step_kernel, StepKernel::chain);
  StepRequest eager;
  eager.graph = Toggle::off;
  EXPECT_EQ(resolved(eager, true, 1, 64).step_kernel, StepKernel::chain);
  StepRequest tf32;
  for (Precision other : {Precision::tf32, Precision::bf16, Precision::tf32x3}) {
    tf32.precision = other;
    EXPECT_EQ(resolved(tf32, true, 1, 64).step_kernel, StepKernel::chain) << setting_name(other);
  }
  StepRequest accumulating;
  accumulating.accumulate_steps = 2;
  EXPECT_EQ(resolved(accumulating, true, 1, 64).step_kernel, StepKernel::chain);
  StepRequest persistent;
  persistent.step_kernel = StepKernel::persistent;
  EXPECT_EQ(resolved(persistent, true, 1, 4096).step_kernel, StepKernel::persistent);  // the trainer judges the model
  EXPECT_EQ(resolved(persistent, true, 2, 64).step_kernel, StepKernel::chain);
  persistent.graph = Toggle::off;
  EXPECT_EQ(resolved(persistent, true, 1, 64).step_kernel, StepKernel::persistent);  // eager launches
  StepRequest chain;
  chain.step_kernel = StepKernel::chain;
  EXPECT_EQ(resolved(chain, true, 1, 64).step_kernel, StepKernel::chain);
}

// One GPU has nothing to reduce: no overlap, no sharding, no bf16 reduction, so its baseline is recorded plainly.
TEST(Resolver, ReductionSettingsOnlyWithMoreThanOneGpu) {
  StepRequest request;
  request.overlap = Toggle::on;
  request.grad_dtype = GradDtype::bf16;
  EXPECT_FALSE(resolved(request, true, 1, 64).overlap);
  EXPECT_EQ(resolved(request, true, 1, 64).grad_dtype, GradDtype::fp32);
  EXPECT_TRUE(resolved(request, true, 2, 64).overlap);
  EXPECT_EQ(resolved(request, true, 2, 64).grad_dtype, GradDtype::bf16);
  StepRequest sharded;
  sharded.optimizer_sharding = Toggle::on;
  EXPECT_FALSE(resolved(sharded, true, 1, 64).optimizer_sharding);
  EXPECT_TRUE(resolved(sharded, true, 2, 64).optimizer_sharding);
  EXPECT_FALSE(resolved({}, true, 2, 64).optimizer_sharding);  // auto: off
}

TEST(Resolver, GemmTuningInTheStepOnlyWhereTheStepIsAGraphAndPlansOnlyOnCuda) {
  EXPECT_EQ(resolved({}).gemm_tuning, GemmTuning::step);
  StepRequest alone;
  alone.gemm_tuning = GemmTuning::alone;
  EXPECT_EQ(resolved(alone).gemm_tuning, GemmTuning::alone);
  StepRequest eager;
  eager.graph = Toggle::off;
  EXPECT_EQ(resolved(eager).gemm_tuning, GemmTuning::alone);
  EXPECT_EQ(resolved({}, false).gemm_tuning, GemmTuning::alone);
  GemmPlan plan;
  plan.option_of_shape["TN m=1 n=1 k=1"] = "skinny";
  TrainingSettings settings = resolved({});
  adopt_gemm_plan(settings, plan, false);
  EXPECT_EQ(settings.gemm_tuning, GemmTuning::step);
  adopt_gemm_plan(settings, GemmPlan{}, true);
  EXPECT_EQ(settings.gemm_tuning, GemmTuning::step);
  adopt_gemm_plan(settings, plan, true);
  EXPECT_EQ(settings.gemm_tuning, GemmTuning::plan);
  EXPECT_EQ(settings.gemm_plan, plan);
}

}  // namespace
}  // namespace mgpu
