// Purpose: MGPU_HOST_DEVICE, so small pure functions compile for the CPU path with g++ and for kernels with nvcc.
#pragma once

#if defined(__CUDACC__)
#define MGPU_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MGPU_HOST_DEVICE inline
#endif
