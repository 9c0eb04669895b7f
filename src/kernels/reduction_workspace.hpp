// Purpose: the device memory of a reduction whose partial results, one per block, are added in a fixed order by the
// last block to finish (a counter per group of blocks): the partials' room and the counters, and an owner of both.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"

namespace mgpu::kernels {

// The counters must be zero before the first call; every completed call leaves them zero. Calls that share a
// workspace must not run concurrently (one stream). The caller owns the memory.
struct ReductionWorkspace {
  float* partials = nullptr;
  std::size_t partial_floats = 0;
  unsigned* counters = nullptr;
  std::size_t counter_count = 0;

  bool has_room(std::size_t floats, std::size_t counter_total) const {
    return (floats == 0 || (partials != nullptr && floats <= partial_floats)) &&
           (counter_total == 0 || (counters != nullptr && counter_total <= counter_count));
  }
};

// Owns a ReductionWorkspace's memory: `partial_floats` floats and `counter_count` counters, zeroed through `stream`
// (synchronised: set-up, never inside a capture).
class ReductionWorkspaceMemory {
 public:
  ReductionWorkspaceMemory(std::size_t partial_floats, std::size_t counter_count, cudaStream_t stream)
      : partials_(partial_floats), counters_(counter_count) {
    if (counter_count > 0) {
      MGPU_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.bytes(), stream));
      MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  ReductionWorkspace view() { return {partials_.data(), partials_.size(), counters_.data(), counters_.size()}; }

 private:
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> counters_;
};

}  // namespace mgpu::kernels
