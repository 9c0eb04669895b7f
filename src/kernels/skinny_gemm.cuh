// Purpose: host launcher of our split-K fp32 GEMM for products with few outputs (n columns: the local batch), where
// cuBLAS's tiles cover few of the 132 SMs: C[m, n] = op(A)[m, k] B[k, n], in tiles of 64 rows by up to 64 columns (a
// grid of column tiles where n is wider). The K parts of one output tile are
// summed in a fixed order, across a thread-block cluster (distributed shared memory) or by the last part to finish
// (through a small workspace): one kernel, the same bits on every call. Plain C++ signatures (g++ callers);
// TunedGemm times it against cuBLASLt.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/reduction_workspace.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"

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

// How the K parts of an output tile are summed (both add the parts in part order, so with the same parts they give
// the same bits).
enum class SkinnyReduction {
  cluster,     // the parts' blocks form one thread-block cluster and add through distributed shared memory
  last_block,  // each part writes its partial tile to the workspace; the last to finish (a counter) adds them
};

struct SkinnyGemmConfig {
  int tile_columns = 32;  // columns of C per block: 16, 32 or 64
  int splits = 1;         // K in this many parts, one block each: 1, 2, 4 or 8 (cluster), up to 16 (last_block)
  SkinnyReduction reduction = SkinnyReduction::cluster;  // ignored with 1 split
  bool wide = false;  // blocks of 512 threads with stages of 128 K values, instead of 256 and 64
};

// "32 columns, 8 splits, wide, last-block sum": for reports and test messages.
std::string describe(const SkinnyGemmConfig& config);

// Device memory of the last_block reduction (reduction_workspace.hpp): room for the partial tiles and one arrival
// counter per output tile.
using SkinnyWorkspace = ReductionWorkspace;
using SkinnyWorkspaceMemory = ReductionWorkspaceMemory;

// What a configuration needs of the workspace for this shape (zero for cluster reductions and a single split).
std::size_t skinny_workspace_floats(int m, int n, const SkinnyGemmConfig& config);
std::size_t skinny_workspace_counters(int m, int n, const SkinnyGemmConfig& config);

// The configurations worth timing for this shape (the launcher accepts more): narrow blocks with cluster sums, and
// for K of 2048 and more wide blocks with last_block sums where `workspace` has room for them. Empty for products of
// more than 64 columns with over 2^21 outputs (cuBLAS's own tiles fill the GPU there) and when the current device has
// no thread-block clusters (compute capability below 9.0).
std::vector<SkinnyGemmConfig> skinny_gemm_configs(int m, int n, int k, const SkinnyWorkspace& workspace = {});

// Column-major C[m, n] = op(A) B, or with `accumulate` C += op(A) B, fp32 products and fp32 accumulation (no TF32).
// op(A) is A stored [m, k] (lda >= m), or with `transpose_a` A stored [k, m] read transposed (lda >= k); B is stored
// [k, n] (ldb >= k; n up to 16 x 65535, the grid's column tiles); only C's m x n elements are written (ldc >= m).
// Without `accumulate` C is never read. Where A and B start on 16-byte boundaries with lda and ldb multiples of 4 they
// are read in 16-byte copies, otherwise in 4-byte ones (any float-aligned operand; a pointer that is not is refused).
// Returns the launch's status instead of throwing (a tuner skips a configuration the device refuses); the caller checks
// it. The kernel is a dependent launch (dependent_launch.cuh): it may start while the kernel ahead of it in the stream
// finishes, and reads B and C only once that kernel is done. `a_is_stable` says that no kernel still running ahead
// of it writes A (the weights of a training step, written only by the optimizer after the step's last GEMM): the
// kernel may then start reading A before that wait. `epilogue` (not with `accumulate`: refused) is applied to every
// stored element. A last_block configuration with more than one split needs `workspace` (refused if it is short).
cudaError_t skinny_gemm(bool transpose_a, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc, bool accumulate, SkinnyGemmConfig config, cudaStream_t stream,
                        bool a_is_stable = false, const SkinnyEpilogue& epilogue = {},
                        const SkinnyWorkspace& workspace = {});

}  // namespace mgpu::kernels
