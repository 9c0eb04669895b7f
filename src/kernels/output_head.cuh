// Purpose: host launcher of the fused output head: for a narrow output layer and a small batch, one kernel does the
// output layer's forward GEMM, the MSE loss with dL/dy, and backward's first input-gradient GEMM through the last
// hidden layer's ReLU/dropout mask, three dependent kernels of the fused-optimizer step's chain otherwise. Plain C++
// signatures, so .cpp files compiled by g++ can call them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include "kernels/cuda_kernels.cuh"

namespace mgpu::kernels {

// The output layer L (linear, no bias) and what it reads and writes; every matrix row-major.
struct OutputHead {
  const float* hidden = nullptr;     // H [batch, fan_in]: layer L - 1's activation after bias, ReLU and dropout
  const float* weights = nullptr;    // W_L [fan_out, fan_in]
  const float* targets = nullptr;    // T [batch, fan_out]
  float* output = nullptr;           // Y [batch, fan_out] = H W_L^T
  float* output_gradient = nullptr;  // dL/dY [batch, fan_out] = 2 (Y - T) / (batch * fan_out)
  float* hidden_gradient = nullptr;  // dL/dZ of layer L - 1 [batch, fan_in]: (dL/dY W_L) * (H > 0 ? keep_scale : 0)
  LossSlots losses;                  // losses.values[params->loss_index] = mean (Y - T)^2, where that slot exists
  const StepParams* params = nullptr;
  int batch = 0;
  int fan_in = 0;
  int fan_out = 0;
  float keep_scale = 1.0f;  // layer L - 1's 1 / (1 - drop probability), dropout_keep_scale
};

// Whether one block runs this head (output_head.cu): fan_out <= 4 and every thread holding at most 16 values of H,
// i.e. fan_in <= 512 up to batch 32 and batch * fan_in <= 16384 above (medium at batches up to 256, large up to 64).
bool output_head_supported(int batch, int fan_in, int fan_out);

// Y, the loss, dL/dY and layer L - 1's dL/dZ as OutputHead says, the loss's and every row's sums in a fixed order (the
// same inputs give the same bits). A dependent launch (dependent_launch.cuh) that reads everything, W_L included,
// after the wait: it may follow any kernel. Refuses (throws) a shape that output_head_supported rejects.
void output_head(const OutputHead& head, cudaStream_t stream);

// Whether a trainer uses the head where it can: yes unless MGPU_OUTPUT_HEAD=off (a diagnostic switch for measuring
// what the head gains, read when a trainer is built; results files do not record it).
inline bool output_head_enabled() {
  const char* value = std::getenv("MGPU_OUTPUT_HEAD");
  return value == nullptr || std::strcmp(value, "off") != 0;
}

}  // namespace mgpu::kernels
