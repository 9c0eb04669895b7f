// Purpose: resolve_step and the default rules (resolver.hpp).
#include "config/resolver.hpp"

#include <string>
#include <type_traits>

#include "config/settings_table.hpp"
#include "platform/error.hpp"

namespace mgpu {

bool fused_optimizer_by_default(int gpus, bool fp32, long long local_batch, long long dense_weights) {
  return gpus == 1 && fp32 && local_batch <= kFusedOptimizerMostLocalBatch &&
         local_batch * dense_weights <= kFusedOptimizerMostWeightSamples;
}

bool overlap_by_default(int gpus, long long local_batch) {
  return gpus >= kOverlapMinGpus && local_batch >= kOverlapMinLocalBatch;
}

void check_step_request(const StepRequest& request) {
  // The sharded optimizer reduce-scatters the whole fp32 gradient once backward is done.
  if (request.optimizer_sharding == Toggle::on && request.overlap == Toggle::on)
    throw UsageError("--optimizer-sharding on: needs --overlap off (it reduce-scatters after backward)");
  if (request.optimizer_sharding == Toggle::on && request.grad_dtype != GradDtype::fp32)
    throw UsageError("--optimizer-sharding on: needs --grad-dtype fp32");
  // Adam writes tf32x3's split of the weights it updates; the all-gathered shards of the other ranks would have none.
  if (request.optimizer_sharding == Toggle::on && request.precision == Precision::tf32x3)
    throw UsageError(
        "--optimizer-sharding on: needs a --precision other than tf32x3 (its weight split is written by "
        "Adam, which updates only this rank's shard)");
  // The persistent kernel forms fp32 products and updates at every step.
  if (request.step_kernel == StepKernel::persistent && request.precision != Precision::fp32) {
    throw UsageError("--step-kernel persistent: needs --precision fp32 (got " +
                     std::string(setting_name(request.precision)) + ")");
  }
  if (request.step_kernel == StepKernel::persistent && request.accumulate_steps != 1) {
    throw UsageError("--step-kernel persistent: needs --accumulate 1 (got " + std::to_string(request.accumulate_steps) +
                     ")");
  }
  // The fused optimizer computes fp32 weight gradients from fp32 activations; other precisions keep the GEMM path.
  if (request.fuse_optimizer == Toggle::on && request.precision != Precision::fp32) {
    throw UsageError("--fuse-optimizer on: needs --precision fp32 (got " +
                     std::string(setting_name(request.precision)) + ")");
  }
}

namespace {

// The CPU fallback has no graphs, no communication stream and only fp32 BLAS: it refuses what it cannot do, each step
// option that says why in its row (settings_table.hpp), other than at its default (a Toggle: on).
void check_cpu_can_honour(const StepRequest& request) {
  for_each_step_option([&](const auto& row) {
    if (row.cpu_refusal == nullptr) return;
    const auto& value = request.*row.request;
    using Request = std::decay_t<decltype(value)>;
    bool refused = false;
    if constexpr (std::is_same_v<Request, Toggle>)
      refused = value == Toggle::on;
    else
      refused = !(value == StepRequest{}.*row.request);
    if (refused)
      throw UsageError("--" + std::string(row.option) + " " + request_text(row, request) + ": " + row.cpu_refusal);
  });
}

// Every step option whose request and setting are of one type, as given; the rules of resolve_step decide the others.
void take_as_given(const StepRequest& request, TrainingSettings& settings) {
  for_each_step_option([&](const auto& row) {
    using Setting = std::decay_t<decltype(settings.*row.setting)>;
    using Request = std::decay_t<decltype(request.*row.request)>;
    if constexpr (std::is_same_v<Setting, Request>) settings.*row.setting = request.*row.request;
  });
}

}  // namespace

void resolve_step(const StepRequest& request, bool cuda_backend, int gpus, TrainingSettings& settings) {
  if (!cuda_backend) check_cpu_can_honour(request);
  check_step_request(request);
  const long long local_batch = settings.global_batch / gpus;
  const bool reduces = gpus > 1;  // one rank has nothing to reduce: nothing to overlap, shard or narrow
  take_as_given(request, settings);
  settings.graph = cuda_backend && request.graph != Toggle::off;
  // auto = off: the sharded optimizer has not measured faster than every rank updating everything.
  settings.optimizer_sharding = cuda_backend && reduces && request.optimizer_sharding == Toggle::on;
  // --overlap auto: where overlap_by_default says, in the order that was measured (deferred), never with the sharded
  // optimizer, which reduce-scatters after backward.
  const bool overlap_by_auto = request.overlap == Toggle::automatic &&
                               request.overlap_order == WeightGradientOrder::deferred &&
                               request.optimizer_sharding != Toggle::on && overlap_by_default(gpus, local_batch);
  settings.overlap = cuda_backend && reduces && (request.overlap == Toggle::on || overlap_by_auto);
  settings.grad_dtype = reduces ? request.grad_dtype : GradDtype::fp32;
  // The fused optimizer needs the whole gradient on this GPU (nothing to all-reduce between the weight gradient and
  // Adam) and fp32.
  const bool fused_requested =
      request.fuse_optimizer == Toggle::on ||
      (request.fuse_optimizer == Toggle::automatic &&
       fused_optimizer_by_default(gpus, request.precision == Precision::fp32, local_batch,
                                  static_cast<long long>(settings.model.dense_weight_count())));
  settings.fused_optimizer = cuda_backend && !reduces && request.precision == Precision::fp32 && fused_requested;
  // The persistent kernel: one rank, fp32, every step an update (check_step_request refuses it otherwise when asked
  // for; with more GPUs it is recorded chain, as the fused optimizer is off). auto is decided by timing the replayed
  // step at set-up (CudaTrainer), so it needs the graph; without one the chain runs.
  const bool persistent_possible = cuda_backend && !reduces && request.precision == Precision::fp32 &&
                                   request.accumulate_steps == 1 &&
                                   (request.step_kernel == StepKernel::persistent || settings.graph);
  settings.step_kernel = persistent_possible ? request.step_kernel : StepKernel::chain;
  // Tuning in the step replays the captured step: without a graph (and on the CPU) the choices made alone stand.
  settings.gemm_tuning =
      settings.graph && request.gemm_tuning == GemmTuning::step ? GemmTuning::step : GemmTuning::alone;
}

void adopt_gemm_plan(TrainingSettings& settings, const GemmPlan& plan, bool cuda_backend) {
  if (!cuda_backend || plan.empty()) return;
  settings.gemm_tuning = GemmTuning::plan;
  settings.gemm_plan = plan;
}

}  // namespace mgpu
