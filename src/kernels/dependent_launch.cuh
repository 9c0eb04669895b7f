// Purpose: programmatic dependent launch (Hopper and later): a kernel of the step is launched while the kernel before
// it in the stream is still finishing, and waits inside (griddepcontrol.wait) before it touches what that kernel
// writes, so the next kernel's launch and set-up overlap the previous one's tail instead of following it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

namespace mgpu::kernels {

// Device side. A kernel launched with dependent_launch_attribute() may start before the kernel ahead of it has
// finished. Until wait_for_previous_kernel() returns it may only read memory that no unfinished kernel writes (the
// weights and the optimizer state, which only the optimizer writes, after the step's last GEMM) and must write
// nothing. After the wait, every kernel ahead of it in the stream has completed and its writes are visible. Both
// calls are no-ops in a kernel launched the ordinary way.
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Lets the next kernel (if launched dependent) be scheduled once every block of this one has called it or exited.
// Called only after wait_for_previous_kernel(): a dependent kernel's early part then overlaps this kernel alone, never
// the one before it, which is what makes the early reads described above safe.
__device__ __forceinline__ void allow_next_kernel_to_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Host side: whether launches on the current device get the attribute: compute capability 9.0 or later, unless
// MGPU_DEPENDENT_LAUNCH=off (a diagnostic switch for measuring what dependent launch gains).
inline bool dependent_launch_enabled() {
  static const bool allowed = [] {
    const char* value = std::getenv("MGPU_DEPENDENT_LAUNCH");
    return value == nullptr || std::strcmp(value, "off") != 0;
  }();
  if (!allowed) return false;
  int device = 0;
  int major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    (void)cudaGetLastError();  // the launch itself will report a broken device
    return false;
  }
  return major >= 9;
}

inline cudaLaunchAttribute dependent_launch_attribute() {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  return attribute;
}

// Launches `kernel` (which calls wait_for_previous_kernel() first) as a dependent launch where enabled, an ordinary
// one otherwise. Returns the launch's status.
template <typename... Params, typename... Args>
cudaError_t launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t shared_bytes,
                             cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute = dependent_launch_attribute();
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = dependent_launch_enabled() ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

}  // namespace mgpu::kernels
