// Purpose: the never-ending kernel of fault_injection.cuh.
#include "kernels/fault_injection.cuh"
#include "platform/cuda_check.hpp"

namespace mgpu::fault_injection {
namespace {

// Never set: the kernel reads it through a volatile pointer, so the loop is a real wait the compiler cannot remove.
__device__ int g_release_spinning_kernel = 0;

__global__ void spin_until_released() {
  while (*static_cast<volatile int*>(&g_release_spinning_kernel) == 0) __nanosleep(1000);
}

}  // namespace

void launch_never_ending_kernel(cudaStream_t stream) {
  spin_until_released<<<1, 1, 0, stream>>>();
  MGPU_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mgpu::fault_injection
