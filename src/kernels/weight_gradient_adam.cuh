// Purpose: the fused optimizer of a single-GPU step: every layer's weight gradient dW = dZ^T X computed tile by tile
// and applied by Adam in the same pass, so the weight gradient never goes to memory (the step moves 24 bytes per
// weight in the optimizer instead of 4 written by the weight-gradient GEMM + 28 moved by Adam). Plain C++ signatures
// (launchers only), so .cpp files compiled by g++ can call them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/cuda_kernels.cuh"
#include "model/mlp_spec.hpp"

namespace mgpu::kernels {

// One dense layer for the fused update: W [fan_out, fan_in] row-major at weight_offset of the flat buffers; its input
// X [batch, fan_in] and its output gradient dZ [batch, fan_out] (row-major, after ReLU/dropout backward); the bias
// (hidden layers) at bias_offset, whose gradient (the batch sum of dZ) this kernel forms too.
struct WeightGradientAdamLayer {
  const float* input = nullptr;
  const float* output_gradient = nullptr;
  std::size_t weight_offset = 0;
  std::size_t bias_offset = 0;
  int fan_in = 0;
  int fan_out = 0;
  bool has_bias = false;
};

// The table entry of a model's dense layer (its offsets, widths and bias), reading `input` and `output_gradient`.
inline WeightGradientAdamLayer weight_gradient_adam_layer(const DenseLayer& dense, const float* input,
                                                          const float* output_gradient) {
  WeightGradientAdamLayer layer;
  layer.input = input;
  layer.output_gradient = output_gradient;
  layer.weight_offset = dense.weight_offset;
  layer.bias_offset = dense.bias_offset;
  layer.fan_in = dense.fan_in;
  layer.fan_out = dense.fan_out;
  layer.has_bias = dense.hidden;
  return layer;
}

// How the launch covers the tiles of W: one block per tile (when other work runs beside it, e.g. the early updates
// during backward: short blocks leave room), or as many blocks as stay resident, each walking several tiles with the
// next one's optimizer state copied in while it computes (when it has the GPU to itself).
enum class WeightGradientAdamGrid { one_tile_per_block, resident };

// For every layer: g = dZ^T X over the batch (plus the gradient buffer's value when `accumulated`: the sum of the
// earlier steps of an accumulation), times adam.gradient_scale, then Adam on the weight with the step's corrections
// from *params; and likewise Adam on the bias with its gradient, the batch sum of dZ (plus the buffer's value when
// `accumulated`). Gradients are neither read (unless `accumulated`) nor written. The batch sums run in a fixed order:
// the same inputs give the same bits.
// layers: layer_count of them (a range of the model's table, e.g. one layer). One launch per 32 layers (the layer table
// travels as a kernel argument). A dependent launch (dependent_launch.cuh) that loads the parameters and moments before
// the kernel ahead of it has finished: that kernel must not write them.
void weight_gradient_adam(const WeightGradientAdamLayer* layers, std::size_t layer_count, int batch, float* parameters,
                          const float* gradients, float* first_moment, float* second_moment, const AdamConstants& adam,
                          const StepParams* params, bool accumulated, WeightGradientAdamGrid grid, cudaStream_t stream);

}  // namespace mgpu::kernels
