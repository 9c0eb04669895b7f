// Purpose: a float sum over one thread block in a fixed order (the same bits on every call), shared by the kernels
// that reduce within one block: the loss, the synthetic batch's projections and the fused output head.
#pragma once

namespace mgpu::kernels {

// Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in thread 0. The order of
// additions depends only on the block size, so the result is reproducible bit for bit.
__device__ inline float block_sum(float value) {
  __shared__ float warp_sums[32];
  __syncthreads();  // a previous call's readers are done with warp_sums
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (warp == 0) {
    value = lane < static_cast<int>(blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

}  // namespace mgpu::kernels
