// Purpose: the hand-over of a fixed-order cross-block sum: each of `parts` blocks stores its partial result, counts
// itself in, and the block that counts last reads every part (in part order, so the sum does not depend on timing).
#pragma once

namespace mgpu::kernels {

// Called by every thread of the block after its partial stores. Returns true in every thread of the block that
// arrives last among the `parts` blocks sharing `counter`. The fences order the partial stores before the count
// (release) and the count before the last block's reads (acquire); that block reads the others' partials with __ldcg
// (from L2, past its SM's L1) and afterwards sets the counter back to zero for the next call, which waits for this one.
__device__ inline bool arrives_last(unsigned* counter, unsigned parts) {
  __shared__ unsigned arrived;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) arrived = atomicAdd(counter, 1u);
  __syncthreads();
  if (arrived != parts - 1) return false;
  __threadfence();
  return true;
}

}  // namespace mgpu::kernels
