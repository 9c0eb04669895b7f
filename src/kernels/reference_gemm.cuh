// Purpose: the float64 reference a GEMM candidate is verified against before it may be timed or chosen: the exact
// product and the sum of the absolute products of every element, and the count of a candidate's elements that differ
// from it by more than a rounding bound. Plain C++ signatures, so .cpp files compiled by g++ can call them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "platform/cuda_resources.hpp"

namespace mgpu::kernels {

// Column-major C[m, n] = op_a(A) op_b(B) in float64, as cuBLAS reads its operands: op_a(A) is A stored [m, k] (lda)
// or, `transpose_a`, A stored [k, m] read transposed; likewise B stored [k, n] or, `transpose_b`, [n, k].
// `bf16_operands`: A and B hold bf16 values, otherwise fp32.
struct ReferenceGemm {
  bool transpose_a = false;
  bool transpose_b = false;
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int lda = 0;
  const void* b = nullptr;
  int ldb = 0;
  bool bf16_operands = false;
};

// What a comparison found: elements beyond the bound (a non-finite value where the reference is finite counts), and
// the largest |c - exact| / bound seen (0 where every element is exact).
struct GemmComparison {
  unsigned long long mismatches = 0;
  double worst_ratio = 0.0;
};

// What a product's consumer applied to it where it was stored (our kernel's epilogue, skinny_gemm.cuh), so that the
// stored values can be compared too: relu_backward: c = activation(i, j) > 0 ? c * keep_scale : 0 (activation laid out
// as C); bias_relu: c = max(c + bias[i], 0) * keep_scale (no dropout: a dropped unit cannot be told from the inputs).
struct ReferenceEpilogue {
  enum class Kind { none, relu_backward, bias_relu };
  Kind kind = Kind::none;
  const float* bias = nullptr;
  const float* activation = nullptr;
  double keep_scale = 1.0;
};

// Owns the reference of one shape's operands on the current device (2 m n doubles), computed once by the constructor
// on `stream` (synchronised: set-up work, never inside a capture).
class GemmReference {
 public:
  GemmReference(const ReferenceGemm& gemm, cudaStream_t stream);

  // Compares column-major `c` (ldc) with the reference: element (i, j) passes when
  // |c - exact| <= relative_bound * sum_l |a_il b_lj| (so an exact zero must be met exactly). Synchronises `stream`.
  // With `epilogue`, the stored values are compared with the epilogue applied to the exact product (both of its forms
  // change an error by at most keep_scale times).
  GemmComparison compare(const float* c, int ldc, double relative_bound, cudaStream_t stream,
                         const ReferenceEpilogue& epilogue = {}) const;

 private:
  int m_, n_;
  DeviceBuffer<double> exact_;                       // [m, n] column-major
  DeviceBuffer<double> magnitude_;                   // [m, n]: sum_l |a_il b_lj|
  mutable DeviceBuffer<unsigned long long> result_;  // the comparison's mismatch count and worst ratio's bits
};

}  // namespace mgpu::kernels
