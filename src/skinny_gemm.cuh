// Purpose: host launcher of our split-K fp32 GEMM for products with few columns (the local batch), where cuBLAS's
// tiles cover few of the 132 SMs: C[m, n] = op(A)[m, k] B[k, n] with n <= 64. The K parts of one output tile run as
// one thread-block cluster and are summed through distributed shared memory in a fixed order: one kernel, no
// workspace, the same bits on every call. Plain C++ signatures (g++ callers); TunedGemm times it against cuBLASLt.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

namespace mgpu::kernels {

struct SkinnyGemmConfig {
  int tile_columns = 32;  // columns of C per block: 16, 32 or 64
  int splits = 1;         // K in this many parts, one block each, forming one cluster per output tile: 1, 2, 4 or 8
};

// Every configuration the launcher accepts for this shape, for a tuner to time: empty when n is over 64 or when the
// current device has no thread-block clusters (compute capability below 9.0).
std::vector<SkinnyGemmConfig> skinny_gemm_configs(int m, int n, int k);

// Column-major C[m, n] = op(A) B, or with `accumulate` C += op(A) B, fp32 products and fp32 accumulation (no TF32).
// op(A) is A stored [m, k] (lda >= m), or with `transpose_a` A stored [k, m] read transposed (lda >= k); B is stored
// [k, n] (ldb >= k); only C's m x n elements are written (ldc >= m). Without `accumulate` C is never read. A and B
// must start on 16-byte boundaries with lda and ldb multiples of 4 (16-byte copies; refused otherwise). Returns
// the launch's status instead of throwing (a tuner skips a configuration the device refuses); the caller checks it.
// The kernel is a dependent launch (dependent_launch.cuh): it may start while the kernel ahead of it in the stream
// finishes, and reads B and C only once that kernel is done. `a_is_stable` says that no kernel still running ahead
// of it writes A (the weights of a training step, written only by the optimizer after the step's last GEMM): the
// kernel may then start reading A before that wait.
cudaError_t skinny_gemm(bool transpose_a, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc, bool accumulate, SkinnyGemmConfig config, cudaStream_t stream,
                        bool a_is_stable = false);

}  // namespace mgpu::kernels
