// Purpose: ProfiledRange, the launches a profiler started with profiling off records (`ncu --profile-from-start off`,
// bench/step_kernels.sh): those of the scope. Without a profiler attached, two host calls that enqueue nothing.
#pragma once

#include <cuda_profiler_api.h>

#include "platform/cuda_check.hpp"

namespace mgpu {

class ProfiledRange {
 public:
  ProfiledRange() { MGPU_CUDA_CHECK(cudaProfilerStart()); }
  ~ProfiledRange() { MGPU_CUDA_WARN(cudaProfilerStop()); }
  ProfiledRange(const ProfiledRange&) = delete;
  ProfiledRange& operator=(const ProfiledRange&) = delete;
};

}  // namespace mgpu
