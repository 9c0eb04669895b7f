// Purpose: the passes that split a whole buffer into its tf32x3 operand (tf32_split.cuh): the batch's inputs, written
// with the batch as data loading, and the weights after an initialisation or an upload (in the step Adam writes them).
#include <algorithm>

#include "kernels/tf32_split.cuh"
#include "kernels/tf32_split_store.cuh"
#include "platform/cuda_check.hpp"

namespace mgpu::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 65536;  // grid-stride loops cover the rest

unsigned grid_for(std::size_t items) {
  return static_cast<unsigned>(std::min((items + kThreads - 1) / kThreads, kMaxBlocks));
}

__global__ void split_rows_kernel(const float* __restrict__ source, std::size_t count, SplitRows destination) {
  const auto width = static_cast<std::size_t>(destination.width);
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t row = i / width;
    store_split(destination, row, static_cast<int>(i - row * width), source[i]);
  }
}

__global__ void split_weights_kernel(const float* __restrict__ parameters, std::size_t count, WeightSplit destination) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    store_weight_split(destination, i, parameters[i]);
}

}  // namespace

void split_rows(const float* source, int rows, const SplitRows& destination, cudaStream_t stream) {
  MGPU_REQUIRE(destination.data != nullptr && destination.width > 0, "split_rows: no destination");
  const std::size_t count = static_cast<std::size_t>(rows) * destination.width;
  if (count == 0) return;
  split_rows_kernel<<<grid_for(count), kThreads, 0, stream>>>(source, count, destination);
  MGPU_CUDA_CHECK_LAUNCH();
}

void split_weights(const float* parameters, std::size_t count, const WeightSplit& destination, cudaStream_t stream) {
  MGPU_REQUIRE(destination.data != nullptr && destination.layers != nullptr, "split_weights: no destination");
  if (count == 0) return;
  split_weights_kernel<<<grid_for(count), kThreads, 0, stream>>>(parameters, count, destination);
  MGPU_CUDA_CHECK_LAUNCH();
}

}  // namespace mgpu::kernels
