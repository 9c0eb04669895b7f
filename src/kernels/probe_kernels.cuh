// Purpose: host launchers of the hardware probe's kernels: an empty kernel (launch and graph-node cost) and random
// fills (a GEMM is never timed on zeros: METHOD.md).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mgpu::probe_kernels {

// One block of one thread that does nothing: what a launch costs by itself.
void empty(cudaStream_t stream);

// values[i] uniform in [-1, 1) from (seed, i); as fp32, or as bf16 bits.
void fill_random(float* values, std::size_t count, std::uint64_t seed, cudaStream_t stream);
void fill_random_bf16(std::uint16_t* values, std::size_t count, std::uint64_t seed, cudaStream_t stream);

}  // namespace mgpu::probe_kernels
