// Purpose: host launcher of our split-K fp32 GEMM for products with few columns (the local batch), where cuBLAS's
// tiles cover few of the 132 SMs: C[m, n] = op(A)[m, k] B[k, n] with n <= 64. The K parts of one output tile run as
// one thread-block cluster and are summed through distributed shared memory in a fixed order: one kernel, no
// workspace, the same bits on every call. Plain C++ signatures (g++ callers); TunedGemm times it against cuBLASLt.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda_kernels.cuh"

namespace mgpu::kernels {

// What the kernel applies to each element of C as it stores it, so that a training step's elementwise pass after
// its GEMM needs no kernel of its own. C is a layer's [batch, width] activations (or their gradient) seen column-major:
// row i of C is unit i, column j is sample j. The formulas are those of bias_relu_dropout and of
// relu_dropout_backward_bias without the bias gradient (cuda_kernels.cuh).
struct SkinnyEpilogue {
  enum class Kind {
    none,
    bias_relu_dropout,      // C = dropout(relu(C + bias[i])), the dropout key from *params and `layer`
    relu_dropout_backward,  // C = activation[j * ldc + i] > 0 ? C * keep_scale : 0 (activation: h, laid out as C)
  };
  Kind kind = Kind::none;
  const float* bias = nullptr;
  const float* activation = nullptr;
  const StepParams* params = nullptr;
  std::uint32_t layer = 0;
  float drop_probability = 0.0f;
  float keep_scale = 1.0f;  // 1 / (1 - drop_probability), computed once as the elementwise kernels do
};

struct SkinnyGemmConfig {
  int tile_columns = 32;  // columns of C per block: 16, 32 or 64
  int splits = 1;         // K in this many parts, one block each, forming one cluster per output tile: 1, 2, 4 or 8
};

// Every configuration the launcher accepts for this shape, for a tuner to time: empty when n is over 64 or when the
// current device has no thread-block clusters (compute capability below 9.0).
std::vector<SkinnyGemmConfig> skinny_gemm_configs(int m, int n, int k);

// Column-major C[m, n] = op(A) B, or with `accumulate` C += op(A) B, fp32 products and fp32 accumulation (no TF32).
// op(A) is A stored [m, k] (lda >= m), or with `transpose_a` A stored [k, m] read transposed (lda >= k); B is stored
// [k, n] (ldb >= k); only C's m x n elements are written (ldc >= m). Without `accumulate` C is never read. Where A and
// B start on 16-byte boundaries with lda and ldb multiples of 4 they are read in 16-byte copies, otherwise in 4-byte
// ones (any float-aligned operand; a pointer that is not is refused). Returns the launch's status instead of
// throwing (a tuner skips a configuration the device refuses); the caller checks it.
// The kernel is a dependent launch (dependent_launch.cuh): it may start while the kernel ahead of it in the stream
// finishes, and reads B and C only once that kernel is done. `a_is_stable` says that no kernel still running ahead
// of it writes A (the weights of a training step, written only by the optimizer after the step's last GEMM): the
// kernel may then start reading A before that wait. `epilogue` (not with `accumulate`: refused) is applied to every
// stored element.
cudaError_t skinny_gemm(bool transpose_a, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc, bool accumulate, SkinnyGemmConfig config, cudaStream_t stream,
                        bool a_is_stable = false, const SkinnyEpilogue& epilogue = {});

}  // namespace mgpu::kernels
