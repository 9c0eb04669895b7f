// Purpose: cp.async (global -> shared memory without registers, sm_80+) helpers shared by our kernels: the copies
// zero-fill whatever lies past the valid part, so ragged edges need no other code.
#pragma once

namespace mgpu::kernels {

// 16 bytes: the first `valid` (0..4) floats copied, the rest zeroed. Both addresses 16-byte aligned.
__device__ __forceinline__ void copy_async(float* shared, const float* global, int valid) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(valid * 4));
}
// One float, or a zero when !valid (then `global` is not read and may be any address).
__device__ __forceinline__ void copy_async(float* shared, const float* global, bool valid) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(address), "l"(global), "r"(valid ? 4 : 0));
}
// Four consecutive floats, the first `valid` (0..4) copied and the rest zeroed: one 16-byte copy when Vector (both
// addresses 16-byte aligned), else four 4-byte ones (the global address need only be 4-byte aligned).
template <bool Vector>
__device__ __forceinline__ void copy4(float* shared, const float* global, int valid) {
  if constexpr (Vector) {
    copy_async(shared, global, valid);
  } else {
#pragma unroll
    for (int e = 0; e < 4; ++e) copy_async(shared + e, e < valid ? global + e : global, e < valid);
  }
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

}  // namespace mgpu::kernels
