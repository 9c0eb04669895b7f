// Purpose: LossBuffer: the device array a run's steps write their losses into, followed by a guard region that is
// checked after set-up and after every run, so that a step writing past its slots is caught on every host instead of
// corrupting whatever allocation the driver happened to place next to the array.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "platform/cuda_resources.hpp"

namespace mgpu {

class LossBuffer {
 public:
  // One slot per step of a run; the guard after them is filled with a fixed bit pattern, on `stream`.
  LossBuffer(int steps, cudaStream_t stream);

  // What the step's kernels write into: the run's slots only (kernels::LossSlots).
  kernels::LossSlots slots() noexcept { return {values_.data(), steps_}; }
  // Enough to catch the step-level GEMM tuning's 65 replays from one reset (the write that went past before), and a
  // counter running on by a few hundred steps; a wider stray write is memcheck's to find (bench/compute_sanitizer.sh).
  static constexpr std::size_t kGuardSlots = 1024;

  // The run's losses (synchronises `stream`). Throws, naming `stage`, when a write landed in the guard.
  std::vector<float> read(cudaStream_t stream, const std::string& stage) const;
  // Throws, naming `stage`, when a write landed in the guard (synchronises `stream`).
  void check_guard(cudaStream_t stream, const std::string& stage) const { (void)read(stream, stage); }

 private:
  std::size_t steps_;
  DeviceBuffer<float> values_;  // steps_ slots, then kGuardSlots of the guard pattern
};

}  // namespace mgpu
