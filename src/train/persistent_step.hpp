// Purpose: the persistent step on a CudaMlp's buffers (--step-kernel persistent; kernels/persistent_step.cuh): the
// plan for its model, batch and GPU, the program the kernel reads, and its launches, whole or cut at the timeline's
// phase boundaries. What it computes is CudaMlp's step with the fused optimizer: the same parameters, moments, inputs,
// activations, dropout masks, loss slots and per-step values.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "config/step_settings.hpp"
#include "kernels/persistent_step.cuh"
#include "platform/cuda_resources.hpp"
#include "train/cuda_mlp.hpp"
#include "train/persistent_plan.hpp"

namespace mgpu {

// Why the persistent step cannot run `mlp`'s model at its batch on the current device, in one line; "" when it can
// (persistent_step_refusal passes and a block of the plan fits an SM).
std::string persistent_step_refusal_on_this_gpu(const CudaMlp& mlp);

class PersistentStep {
 public:
  // Plans the step of `mlp`'s model and batch for the current device (one block per SM), every parameter updated by
  // Adam with `adam` at every step; each step's loss goes to its slot of `losses`. `mlp` must outlive this object.
  // Refused (Error, one line) where persistent_step_refusal_on_this_gpu refuses.
  PersistentStep(CudaMlp& mlp, kernels::LossSlots losses, const AdamSettings& adam);
  PersistentStep(const PersistentStep&) = delete;
  PersistentStep& operator=(const PersistentStep&) = delete;

  // The launches of one step, on the model's stream, after the batch is in place: the whole step in one, or the
  // timeline's phases one launch each (forward, then backward, which a model with one hidden layer does not have,
  // then the update), so that events between them mark the phases' boundaries.
  void enqueue_whole();
  void enqueue_forward();
  void enqueue_backward();
  void enqueue_update();

  const PersistentPlan& plan() const noexcept { return plan_; }
  int blocks() const noexcept { return blocks_; }
  // "persistent step: 7 phases on 132 blocks of 512 threads, 64 KiB of shared memory; tiles ...", for the set-up
  // report.
  std::string description() const;

 private:
  // The program's table entry of layer l of `mlp` (its buffers: x, hidden_[l], output_, output_gradients_[l]).
  static kernels::PersistentLayer program_layer(CudaMlp& mlp, const DenseLayer& layer, std::size_t l);
  static void set_phases(kernels::PersistentProgram& program, const std::vector<kernels::PersistentPhase>& phases);
  void launch(const kernels::PersistentProgram& program, int first_phase, int end_phase);

  CudaMlp& mlp_;
  PersistentPlan plan_;
  int blocks_ = 0;
  std::size_t shared_bytes_ = 0;
  DeviceBuffer<float> sample_losses_;          // [batch]: each sample's squared errors, summed by the update phase
  kernels::PersistentProgram program_;         // the whole step in one launch: plan_.phases
  kernels::PersistentProgram marked_program_;  // one launch per marked phase: plan_.marked_phases
};

}  // namespace mgpu
