// Purpose: the step options as the user gave them (StepRequest), "auto" included, before the resolver decides them.
#pragma once

#include "config/step_settings.hpp"

namespace mgpu {

// What the user asked of the step (--graph, --overlap, --overlap-order, --overlap-update, --fuse-optimizer,
// --bucket-mb, --precision,
// --grad-dtype, --optimizer-sharding, --timing, --accumulate, --gemm-tuning), unresolved: cli/ parses into it, and
// resolve_step (config/resolver.hpp) turns it into each configuration's TrainingSettings.
enum class Toggle { automatic, on, off };
struct StepRequest {
  Toggle graph = Toggle::automatic;
  Toggle overlap = Toggle::automatic;
  Toggle fuse_optimizer = Toggle::automatic;
  double bucket_mb = 8.0;
  WeightGradientOrder overlap_order = WeightGradientOrder::deferred;  // --overlap-order
  OverlapUpdate overlap_update = OverlapUpdate::per_bucket;           // --overlap-update
  Precision precision = Precision::fp32;
  TimingMode timing = TimingMode::interleaved;
  GradDtype grad_dtype = GradDtype::fp32;         // --grad-dtype
  Toggle optimizer_sharding = Toggle::automatic;  // --optimizer-sharding (auto: off)
  int accumulate_steps = 1;  // --accumulate K: reduce and update every K steps (1..kMaxAccumulateSteps)
  GemmTuning gemm_tuning = GemmTuning::step;  // --gemm-tuning (step only where the step is a graph)
};
constexpr int kMaxAccumulateSteps = 1024;

}  // namespace mgpu
