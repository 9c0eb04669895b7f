// Purpose: host launcher of the persistent training step: one cooperative kernel that runs a one-GPU fp32 step's
// phases (forward, the output layer and loss, backward, weight gradients and Adam) with grid-wide barriers between
// them instead of one kernel per link of the step's chain. Plain C++ signatures, so .cpp files compiled by g++ can
// call them; the geometry of the phases is persistent_tiles.hpp's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda_kernels.cuh"
#include "kernels/persistent_tiles.hpp"

namespace mgpu::kernels {

// Dense layer l of the step and the buffers it reads and writes (row-major, [batch, width]).
struct PersistentLayer {
  const float* input = nullptr;      // x (layer 0) or hidden layer l - 1's output: [batch, fan_in]
  float* output = nullptr;           // after bias, ReLU and dropout (hidden), or y (the output layer): [batch, fan_out]
  float* output_gradient = nullptr;  // dL/dZ of this layer (dL/dy for the output layer): [batch, fan_out]
  float* input_gradient = nullptr;   // dL/dZ of layer l - 1 (l >= 1), through its ReLU and dropout: [batch, fan_in]
  std::size_t weight_offset = 0;     // W [fan_out, fan_in] in the flat parameter buffers
  std::size_t bias_offset = 0;       // hidden layers
  int fan_in = 0;
  int fan_out = 0;
  bool hidden = false;
};

// Everything one step's phases read and write. The per-step values (dropout key, first sample, loss slot, Adam's
// corrections) come from *params when the kernel runs, so a captured launch replays correctly.
struct PersistentProgram {
  PersistentLayer layers[kPersistentMaxLayers];
  int layer_count = 0;
  PersistentPhase phases[kPersistentMaxPhases];
  int phase_count = 0;
  ProductTiling update_tilings[kPersistentMaxLayers];  // the update phase's, per layer
  int update_tiles = 0;                                // their sum
  float* parameters = nullptr;
  float* first_moment = nullptr;
  float* second_moment = nullptr;
  const float* targets = nullptr;  // [batch, outputs]
  float* sample_losses = nullptr;  // [batch]: each sample's sum of squared errors, written by the head phase
  LossSlots losses;
  const StepParams* params = nullptr;
  AdamConstants adam;
  int batch = 0;
  float drop_probability = 0.0f;
  float keep_scale = 1.0f;  // dropout_keep_scale(drop_probability)
};

// How many of the kernel's blocks one SM of the current device holds with `shared_bytes` of dynamic shared memory (0:
// none), after raising the kernel's limit on it to the device's most (once per device is enough; again is harmless).
int persistent_step_blocks_per_sm(std::size_t shared_bytes);

// Runs phases [first_phase, end_phase) of `program` on `stream` in one cooperative launch of `blocks` blocks (at most
// one per SM times persistent_step_blocks_per_sm), with a grid-wide barrier between consecutive phases. Returns the
// launch's status (the caller checks it): a cooperative launch larger than the GPU can hold at once is refused.
cudaError_t persistent_step(const PersistentProgram& program, int first_phase, int end_phase, int blocks,
                            std::size_t shared_bytes, cudaStream_t stream);

}  // namespace mgpu::kernels
