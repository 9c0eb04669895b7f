// Purpose: run a set-up step (e.g. a kernel's shared-memory opt-in) once per CUDA device, before that device's first
// launch: such steps are not stream work, so they must stay out of any graph capture, and repeating them per launch
// would cost host time on every step.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>

namespace mgpu {

// Calls prepare() (returning cudaError_t) unless it already succeeded on the current device. `prepared` holds one bit
// per device (devices past 63 prepare on every call); a lock-free check on every call, and preparing twice from two
// threads at once is harmless.
template <typename Prepare>
cudaError_t once_per_device(std::atomic<std::uint64_t>& prepared, Prepare prepare) {
  int device = 0;
  const cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  const std::uint64_t bit = device < 64 ? std::uint64_t{1} << device : 0;
  if (bit != 0 && (prepared.load(std::memory_order_acquire) & bit) != 0) return cudaSuccess;
  const cudaError_t prepared_status = prepare();
  if (prepared_status == cudaSuccess) prepared.fetch_or(bit, std::memory_order_release);
  return prepared_status;
}

}  // namespace mgpu
