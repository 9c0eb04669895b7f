// Purpose: the plan of the persistent step (kernels/persistent_step.cuh): which models and batches it serves, and for
// a model, batch and grid the list of phases with each product's tiling, chosen by a rough cost model of the phase on
// one GPU. Pure C++ (no CUDA): the CPU tests hold its geometry to the float64 step.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/persistent_tiles.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// What the persistent step serves: a model whose step's activations stay on chip, where one launch can beat the
// chain of kernels. Its activations and their gradients (x, targets, each hidden layer's output and dL/dZ, y and
// dL/dy) at most kPersistentMaxActivationBytes, a third of an H100's or H200's 50 MB L2 cache; a local batch of at
// most kPersistentMaxBatch (beyond it the chain's tuned GEMMs fill the GPU better than one tile per block); one hidden
// layer at least, at most kernels::kPersistentMaxLayers layers and kernels::kPersistentMaxOutputs outputs.
inline constexpr int kPersistentMaxBatch = 128;
inline constexpr std::size_t kPersistentMaxActivationBytes = std::size_t{16} << 20;
// Shared memory a block may stage through: 160 KiB of the 227 KiB a block of an H100 or H200 may have, so that a
// chunk of at least 158 K values of both operands fits at the widest tiles.
inline constexpr int kPersistentSharedBudgetFloats = 40 * 1024;

// The bytes of the step's activations and their gradients (see above) for `model` at local batch `batch`.
std::size_t persistent_activation_bytes(const MlpSpec& model, int batch);

// Why `model` at local batch `batch` cannot run the persistent step, in one line naming the limit; "" when it can.
std::string persistent_step_refusal(const MlpSpec& model, int batch);

struct PersistentPlan {
  // The step cut where the timeline marks it: the forward of each hidden layer, the head (output layer, loss terms,
  // dL/dy and the last hidden layer's dL/dZ), the input gradients from the last hidden layer down to layer 1, the
  // update. Phases [0, forward_end) make the timeline's forward phase (the loss and dL/dy written; with the head, the
  // last hidden layer's dL/dZ too, as the chain's fused output head does), [forward_end, backward_end) its backward
  // (every dL/dZ written), the rest (the update) its optimizer phase.
  std::vector<kernels::PersistentPhase> marked_phases;
  int forward_end = 0;
  int backward_end = 0;
  // The step as one launch: marked_phases, or with the last hidden layer's forward, the head and its input gradient
  // joined into one tail phase (kernels::PersistentPhaseKind::tail) with the same tilings, so the same bits.
  std::vector<kernels::PersistentPhase> phases;
  std::vector<kernels::ProductTiling> update_tilings;  // the update's, per layer
  int shared_floats = 0;  // the launch's dynamic shared memory, in floats: the most any product needs
};

// The plan for `model` at local batch `batch` on a grid of `blocks` blocks (persistent_step_refusal must be ""). Each
// product's tiles are the ones the cost model puts fastest, ties to the first candidate: a function of the shape and
// the grid alone, so two processes on one GPU model run the same sums.
PersistentPlan plan_persistent_step(const MlpSpec& model, int batch, int blocks);

}  // namespace mgpu
