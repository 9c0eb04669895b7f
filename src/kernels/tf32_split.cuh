// Purpose: the split operands of --precision tf32x3 (model/tf32_split.hpp) as the kernels write them: where each
// value's TF32 parts go (SplitRows for an activation or a gradient, WeightSplit for the flat parameter buffer), and
// the two passes that split a whole buffer (the batch's inputs as data loading writes them, the parameters after an
// initialisation or an upload). The step's own producers write their outputs' splits in the pass that writes them
// (cuda_kernels.cuh). Plain C++ signatures, for the .cpp files compiled by g++.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace mgpu::kernels {

// The split copy of a row-major [rows, width] fp32 matrix: row r as 2 * width floats at data + 2 r width, the TF32 big
// parts of its values in one half and their small parts in the other, big first or small first (the order the GEMMs'
// concatenated products need: train/tf32x3_operands.hpp). data null: no copy.
struct SplitRows {
  float* data = nullptr;
  int width = 0;
  bool small_first = false;
};

// The split copy of the weights in the flat parameter buffer: layer k's W[fan_out, fan_in], elements [begin, end) of
// the buffer, as SplitRows of width fan_in, small first, at data + 2 begin; a bias has none. `layers` (device memory)
// lists the weight ranges in ascending order. first_index: the flat index of the first element of the range a kernel
// is given (Adam's bucket, say).
struct WeightSplitLayer {
  std::size_t begin = 0;
  std::size_t end = 0;
  int fan_in = 0;
};
struct WeightSplit {
  float* data = nullptr;  // null: no copy
  const WeightSplitLayer* layers = nullptr;
  int layer_count = 0;
  std::size_t first_index = 0;
};

// destination's rows r < rows: the split of source[r, :] (source row-major [rows, destination.width]).
void split_rows(const float* source, int rows, const SplitRows& destination, cudaStream_t stream);

// The split of every weight among parameters[0, count) (destination.first_index: the flat index of parameters[0]).
void split_weights(const float* parameters, std::size_t count, const WeightSplit& destination, cudaStream_t stream);

}  // namespace mgpu::kernels
