// Purpose: the device side of tf32_split.cuh: one value's TF32 parts stored where a SplitRows or a WeightSplit puts
// them, for every kernel that writes a tf32x3 operand (device code only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/tf32_split.cuh"
#include "model/tf32_split.hpp"

namespace mgpu::kernels {

// Value (row, column) of the matrix `copy` splits.
__device__ __forceinline__ void store_split(const SplitRows& copy, std::size_t row, int column, float value) {
  const tf32::Split parts = tf32::split(value);
  float* first = copy.data + row * 2 * static_cast<std::size_t>(copy.width) + column;
  first[0] = copy.small_first ? parts.small : parts.big;
  first[copy.width] = copy.small_first ? parts.big : parts.small;
}

// The weight layer that holds flat index `index`, or null for a bias (binary search over the ascending ranges).
__device__ __forceinline__ const WeightSplitLayer* weight_layer_of(const WeightSplit& split, std::size_t index) {
  int low = 0, high = split.layer_count;  // the answer lies in [low, high)
  while (high - low > 1) {
    const int middle = (low + high) / 2;
    if (split.layers[middle].begin <= index) {
      low = middle;
    } else {
      high = middle;
    }
  }
  const WeightSplitLayer* layer = split.layers + low;
  return split.layer_count > 0 && layer->begin <= index && index < layer->end ? layer : nullptr;
}

// Element `offset` of the range the kernel was given (flat index split.first_index + offset), if it is a weight.
__device__ __forceinline__ void store_weight_split(const WeightSplit& split, std::size_t offset, float value) {
  const std::size_t index = split.first_index + offset;
  const WeightSplitLayer* layer = weight_layer_of(split, index);
  if (layer == nullptr) return;
  // 32-bit division (a layer holds fewer than 2^32 weights; the launchers check): a 64-bit one is a long sequence.
  const auto within = static_cast<std::uint32_t>(index - layer->begin);
  const auto fan_in = static_cast<std::uint32_t>(layer->fan_in);
  const std::uint32_t row = within / fan_in;
  store_split(SplitRows{split.data + 2 * layer->begin, layer->fan_in, true}, row,
              static_cast<int>(within - row * fan_in), value);
}

}  // namespace mgpu::kernels
