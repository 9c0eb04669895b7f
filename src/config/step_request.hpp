// Purpose: the step options as the user gave them (StepRequest), "auto" included, before the resolver decides them.
#pragma once

#include "config/step_settings.hpp"

namespace mgpu {

// What the user asked of the step, unresolved: each member is the request column of one row of the settings table
// (config/settings_table.hpp), which names its option, values and help; cli/ parses into it and resolve_step
// (config/resolver.hpp) turns it into each configuration's TrainingSettings. Its defaults are the command line's.
enum class Toggle { automatic, on, off };
inline constexpr NamedValue<Toggle> kToggleNames[] = {
    {Toggle::automatic, "auto"}, {Toggle::on, "on"}, {Toggle::off, "off"}};
constexpr const auto& named_values(Toggle) { return kToggleNames; }
struct StepRequest {
  Toggle graph = Toggle::automatic;
  Toggle overlap = Toggle::automatic;
  Toggle fuse_optimizer = Toggle::automatic;
  double bucket_mb = 8.0;
  WeightGradientOrder overlap_order = WeightGradientOrder::deferred;
  OverlapUpdate overlap_update = OverlapUpdate::per_bucket;
  Precision precision = Precision::fp32;
  TimingMode timing = TimingMode::interleaved;
  GradDtype grad_dtype = GradDtype::fp32;
  Toggle optimizer_sharding = Toggle::automatic;  // auto: off
  int accumulate_steps = 1;                       // reduce and update every K steps (1..kMaxAccumulateSteps)
  GemmTuning gemm_tuning = GemmTuning::step;      // step only where the step is a graph
  int nccl_max_ctas = 0;                          // 0: NCCL's choice
  int overlap_sm_target = 0;                      // 0: every SM
  // One GPU: the step as a chain of kernels or one persistent kernel, auto timed at set-up.
  StepKernel step_kernel = StepKernel::automatic;
};
constexpr int kMaxAccumulateSteps = 1024;

}  // namespace mgpu
