// Purpose: CudaTrainer's persistent step (--step-kernel; persistent_step.hpp): making it where it may run, its first
// launch, the choice between it and the chain of kernels at set-up, and the step enqueued as one launch or as one per
// marked phase.
#include <algorithm>
#include <cstdio>
#include <limits>

#include "platform/error.hpp"
#include "train/cuda_trainer.hpp"
#include "train/gemm/coordinate_search.hpp"

namespace mgpu {

void CudaTrainer::set_up_persistent_step() {
  if (settings_.step_kernel == StepKernel::chain) return;
  const bool asked = settings_.step_kernel == StepKernel::persistent;
  // The resolver gives persistent and auto one rank, fp32 and no accumulation; a trainer made from settings by hand
  // is held to the same.
  std::string refusal;
  if (nccl_) {
    refusal = "runs on one GPU, not " + std::to_string(world_size_);
  } else if (settings_.precision != Precision::fp32) {
    refusal = std::string("needs --precision fp32, not ") + setting_name(settings_.precision);
  } else if (settings_.accumulate_steps != 1) {
    refusal = "needs --accumulate 1, not " + std::to_string(settings_.accumulate_steps);
  } else {
    refusal = persistent_step_refusal_on_this_gpu(model_);
  }
  if (!refusal.empty()) {
    if (asked) throw UsageError("--step-kernel persistent: " + refusal);
    return;  // auto: the chain, without a word (the model, batch or GPU is beyond the persistent step)
  }
  persistent_ = std::make_unique<PersistentStep>(model_, losses_.slots(), settings_.adam);
}

std::string CudaTrainer::choose_step_kernel(int steps_seen) {
  // Option 0 the chain (the start, which ties keep), option 1 the persistent kernel, each judged by the replayed step
  // as step-level GEMM tuning judges its options, with the same margin and final check.
  double fastest_ms[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const auto apply = [&](std::size_t, int option) {
    persistent_in_use_ = option == 1;
    capture_step_graphs(steps_seen);
  };
  const auto measure = [&] {
    const double ms = time_step_replays();
    double& fastest = fastest_ms[persistent_in_use_ ? 1 : 0];
    fastest = std::min(fastest, ms);
    return ms;
  };
  coordinate_search({2}, {0}, kStepSearchMargin, kStepSearchCheckRounds, apply, measure);
  char line[192];
  std::snprintf(line, sizeof line, "step kernel: chain %.4f ms, persistent %.4f ms per replayed step: %s\n",
                fastest_ms[0], fastest_ms[1], persistent_in_use_ ? "persistent" : "chain");
  return line + persistent_->description();
}

void CudaTrainer::warm_up_persistent_step() {
  if (!persistent_) return;
  persistent_in_use_ = true;
  enqueue_step(timeline_.step_events(0), StepKind{});
  persistent_in_use_ = false;
}

void CudaTrainer::settle_step_kernel(int steps_seen) {
  if (!persistent_) return;
  if (settings_.step_kernel == StepKernel::persistent) {
    persistent_in_use_ = true;
    if (settings_.graph) capture_step_graphs(steps_seen);
    return;
  }
  // auto: decided in the replayed step, so only where the step is a graph.
  if (!settings_.graph) return;
  const std::string found = choose_step_kernel(steps_seen);
  if (rank_ == 0 && gemm_report_enabled()) std::fprintf(stderr, "%s", found.c_str());
}

void CudaTrainer::enqueue_persistent_step(const StepEvents* events, StepKind kind) {
  // One rank, every step an update (set_up_persistent_step). Unmarked or with --timing step: the whole step in one
  // launch. With phase marks: one launch per phase of the timeline, each mark between two launches, where the fused
  // step puts it: forward = start -> forward_end (the loss, dL/dy and the last hidden layer's dL/dZ written, as with
  // the fused output head), backward = -> backward_end (every dL/dZ), optimizer = -> end (every weight and bias
  // gradient, formed inside Adam). The kernel cannot mark a boundary inside one launch, so a marked step makes three
  // launches where an unmarked one makes one: its phases add up to a longer step than the runs without marks time.
  MGPU_REQUIRE(kind.update && !kind.accumulate, "the persistent step updates at every step (no accumulation)");
  const cudaStream_t compute = compute_stream_.get();
  mark(events, StepTimeline::kStart, compute);
  if (timeline_.records_phase_marks(events)) {
    persistent_->enqueue_forward();
    mark(events, StepTimeline::kForwardEnd, compute);
    persistent_->enqueue_backward();
    mark(events, StepTimeline::kBackwardEnd, compute);
    persistent_->enqueue_update();
  } else {
    persistent_->enqueue_whole();
  }
  mark(events, StepTimeline::kEnd, compute);
}

}  // namespace mgpu
