// Purpose: PersistentStep (persistent_step.hpp): the kernel's program from a CudaMlp's buffers and the plan, and its
// launches.
#include "train/persistent_step.hpp"

#include <algorithm>

#include "platform/cuda_check.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

// One block per SM: every block is resident for the whole launch, as a cooperative launch requires.
int blocks_of(const CudaMlp& mlp) { return mlp.gemm().multiprocessors(); }

std::size_t shared_bytes_of(const PersistentPlan& plan) {
  return static_cast<std::size_t>(plan.shared_floats) * sizeof(float);
}

std::string tile_text(const kernels::ProductTiling& t) {
  return std::to_string(t.tile_rows) + "x" + std::to_string(t.tile_columns) + " (" +
         std::to_string(kernels::tile_count(t)) + ")";
}

}  // namespace

kernels::PersistentLayer PersistentStep::program_layer(CudaMlp& mlp, const DenseLayer& layer, std::size_t l) {
  kernels::PersistentLayer entry;
  entry.input = l == 0 ? mlp.inputs_.data() : mlp.hidden_[l - 1].data();
  entry.output = layer.hidden ? mlp.hidden_[l].data() : mlp.output_.data();
  entry.output_gradient = mlp.output_gradients_[l].data();
  entry.input_gradient = l == 0 ? nullptr : mlp.output_gradients_[l - 1].data();
  entry.weight_offset = layer.weight_offset;
  entry.bias_offset = layer.bias_offset;
  entry.fan_in = layer.fan_in;
  entry.fan_out = layer.fan_out;
  entry.hidden = layer.hidden;
  return entry;
}

std::string persistent_step_refusal_on_this_gpu(const CudaMlp& mlp) {
  const std::string refusal = persistent_step_refusal(mlp.model(), mlp.batch());
  if (!refusal.empty()) return refusal;
  const std::size_t shared_bytes = shared_bytes_of(plan_persistent_step(mlp.model(), mlp.batch(), blocks_of(mlp)));
  if (kernels::persistent_step_blocks_per_sm(shared_bytes) >= 1) return "";
  return "a block of " + std::to_string(kernels::kPersistentThreads) + " threads with " + std::to_string(shared_bytes) +
         " bytes of shared memory does not fit an SM of this GPU";
}

PersistentStep::PersistentStep(CudaMlp& mlp, kernels::LossSlots losses, const AdamSettings& adam)
    : mlp_(mlp),
      plan_(plan_persistent_step(mlp.model(), mlp.batch(), blocks_of(mlp))),
      blocks_(blocks_of(mlp)),
      shared_bytes_(shared_bytes_of(plan_)),
      sample_losses_(static_cast<std::size_t>(mlp.batch())) {
  const std::string refusal = persistent_step_refusal_on_this_gpu(mlp);
  MGPU_REQUIRE(refusal.empty(), "--step-kernel persistent: " + refusal);

  const std::vector<DenseLayer> layers = mlp.model().layers();
  program_.layer_count = static_cast<int>(layers.size());
  for (std::size_t l = 0; l < layers.size(); ++l) program_.layers[l] = program_layer(mlp, layers[l], l);
  std::copy(plan_.update_tilings.begin(), plan_.update_tilings.end(), program_.update_tilings);
  for (const kernels::ProductTiling& t : plan_.update_tilings) program_.update_tiles += kernels::tile_count(t);
  program_.parameters = mlp.parameters_.data();
  program_.first_moment = mlp.first_moment_.data();
  program_.second_moment = mlp.second_moment_.data();
  program_.targets = mlp.targets_.data();
  program_.sample_losses = sample_losses_.data();
  program_.losses = losses;
  program_.params = mlp.step_params();
  // Every step updates with the mean of one batch's gradient (no accumulation): a gradient scale of 1.
  program_.adam = {adam.learning_rate, adam.beta1, adam.beta2, adam.epsilon, 1.0f};
  program_.batch = mlp.batch();
  program_.drop_probability = mlp.drop_probability_;
  program_.keep_scale = kernels::dropout_keep_scale(mlp.drop_probability_);
  // The two programs differ only in their phase lists (persistent_plan.hpp).
  marked_program_ = program_;
  set_phases(program_, plan_.phases);
  set_phases(marked_program_, plan_.marked_phases);
}

void PersistentStep::set_phases(kernels::PersistentProgram& program,
                                const std::vector<kernels::PersistentPhase>& phases) {
  MGPU_REQUIRE(phases.size() <= static_cast<std::size_t>(kernels::kPersistentMaxPhases),
               "the persistent step's plan has more phases than the kernel's table holds");
  program.phase_count = static_cast<int>(phases.size());
  std::copy(phases.begin(), phases.end(), program.phases);
}

void PersistentStep::launch(const kernels::PersistentProgram& program, int first_phase, int end_phase) {
  if (first_phase >= end_phase) return;
  MGPU_CUDA_CHECK(kernels::persistent_step(program, first_phase, end_phase, blocks_, shared_bytes_, mlp_.stream_));
}

void PersistentStep::enqueue_whole() { launch(program_, 0, program_.phase_count); }
void PersistentStep::enqueue_forward() { launch(marked_program_, 0, plan_.forward_end); }
void PersistentStep::enqueue_backward() { launch(marked_program_, plan_.forward_end, plan_.backward_end); }
void PersistentStep::enqueue_update() { launch(marked_program_, plan_.backward_end, marked_program_.phase_count); }

std::string PersistentStep::description() const {
  const bool tail = plan_.phases.size() < plan_.marked_phases.size();
  std::string text = "persistent step: " + std::to_string(plan_.phases.size()) + " phases" +
                     (tail ? " (the last hidden layer's in one tail)" : "") + " on " + std::to_string(blocks_) +
                     " blocks of " + std::to_string(kernels::kPersistentThreads) + " threads, " +
                     std::to_string(shared_bytes_ / 1024) + " KiB of shared memory; tiles:";
  for (const kernels::PersistentPhase& phase : plan_.marked_phases) {
    if (phase.kind == kernels::PersistentPhaseKind::forward)
      text += " forward " + std::to_string(phase.layer) + " " + tile_text(phase.tiling) + ",";
    if (phase.kind == kernels::PersistentPhaseKind::input_gradient)
      text += " input gradient " + std::to_string(phase.layer) + " " + tile_text(phase.tiling) + ",";
  }
  for (std::size_t l = 0; l < plan_.update_tilings.size(); ++l)
    text += " update " + std::to_string(l) + " " + tile_text(plan_.update_tilings[l]) + ",";
  text.back() = '\n';
  return text;
}

}  // namespace mgpu
