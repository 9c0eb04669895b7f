// Purpose: the float64 GEMM reference (a shared-memory tiled product that also sums the absolute products) and the
// elementwise comparison of a candidate's fp32 result with it.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/reference_gemm.cuh"
#include "platform/cuda_check.hpp"
#include "platform/error.hpp"

namespace mgpu::kernels {
namespace {

constexpr int kTile = 16;

__device__ double operand(const void* matrix, bool bf16, std::size_t index) {
  return bf16 ? static_cast<double>(__bfloat162float(static_cast<const __nv_bfloat16*>(matrix)[index]))
              : static_cast<double>(static_cast<const float*>(matrix)[index]);
}

// op_a(A)[i, l] and op_b(B)[l, j] as cuBLAS reads them (column-major storage).
__device__ double element_a(const ReferenceGemm& g, int i, int l) {
  return operand(g.a, g.bf16_operands, g.transpose_a ? std::size_t(i) * g.lda + l : std::size_t(l) * g.lda + i);
}
__device__ double element_b(const ReferenceGemm& g, int l, int j) {
  return operand(g.b, g.bf16_operands, g.transpose_b ? std::size_t(l) * g.ldb + j : std::size_t(j) * g.ldb + l);
}

// One thread per element of C, K walked in tiles staged through shared memory.
__global__ void reference_gemm_kernel(ReferenceGemm g, double* exact, double* magnitude) {
  __shared__ double a_tile[kTile][kTile + 1];
  __shared__ double b_tile[kTile][kTile + 1];
  const int i = blockIdx.x * kTile + threadIdx.x;
  const int j = blockIdx.y * kTile + threadIdx.y;
  double sum = 0.0, absolute = 0.0;
  for (int base = 0; base < g.k; base += kTile) {
    // a_tile[l][x] = op_a(A)[i, base + l] and b_tile[l][y] = op_b(B)[base + l, j] of this block's rows and columns.
    a_tile[threadIdx.y][threadIdx.x] = i < g.m && base + threadIdx.y < g.k ? element_a(g, i, base + threadIdx.y) : 0.0;
    b_tile[threadIdx.x][threadIdx.y] = j < g.n && base + threadIdx.x < g.k ? element_b(g, base + threadIdx.x, j) : 0.0;
    __syncthreads();
    for (int l = 0; l < kTile; ++l) {
      const double product = a_tile[l][threadIdx.x] * b_tile[l][threadIdx.y];
      sum += product;
      absolute += fabs(product);
    }
    __syncthreads();
  }
  if (i < g.m && j < g.n) {
    exact[std::size_t(j) * g.m + i] = sum;
    magnitude[std::size_t(j) * g.m + i] = absolute;
  }
}

struct DeviceComparison {
  unsigned long long mismatches;
  unsigned long long worst_ratio_bits;  // a non-negative double's bits order as the double does
};

__global__ void compare_kernel(const double* exact, const double* magnitude, int m, int n, const float* c, int ldc,
                               double relative_bound, ReferenceEpilogue epilogue, DeviceComparison* result) {
  const std::size_t count = std::size_t(m) * n;
  for (std::size_t index = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; index < count;
       index += std::size_t(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(index % m);
    const int j = static_cast<int>(index / m);
    double expected = exact[index];
    double bound = relative_bound * magnitude[index];
    const std::size_t stored = std::size_t(j) * ldc + i;
    if (epilogue.kind == ReferenceEpilogue::Kind::relu_backward) {
      expected = epilogue.activation[stored] > 0.0f ? expected * epilogue.keep_scale : 0.0;
      bound *= epilogue.keep_scale;
    } else if (epilogue.kind == ReferenceEpilogue::Kind::bias_relu) {
      expected = fmax(expected + static_cast<double>(epilogue.bias[i]), 0.0) * epilogue.keep_scale;
      // + the rounding of the bias addition, relative to the sum
      bound = (bound + ldexp(fabs(expected), -23)) * epilogue.keep_scale;
    }
    const double got = c[stored];
    const double error = fabs(got - expected);
    // A non-finite result fails unless the reference is non-finite too (operands holding NaN or infinity).
    const bool pass = isfinite(expected) ? error <= bound : !isfinite(got);
    double ratio = 0.0;
    if (!pass) {
      atomicAdd(&result->mismatches, 1ull);
      ratio = bound > 0.0 && isfinite(error) ? error / bound : INFINITY;
    } else if (bound > 0.0 && isfinite(expected)) {
      ratio = error / bound;
    }
    if (ratio > 0.0) atomicMax(&result->worst_ratio_bits, static_cast<unsigned long long>(__double_as_longlong(ratio)));
  }
}

}  // namespace

GemmReference::GemmReference(const ReferenceGemm& gemm, cudaStream_t stream)
    : m_(gemm.m),
      n_(gemm.n),
      exact_(std::size_t(std::max(gemm.m, 0)) * std::max(gemm.n, 0)),
      magnitude_(exact_.size()),
      result_(2) {
  MGPU_REQUIRE(gemm.m > 0 && gemm.n > 0 && gemm.k > 0, "GemmReference: an empty product");
  const dim3 block(kTile, kTile);
  const dim3 grid((m_ + kTile - 1) / kTile, (n_ + kTile - 1) / kTile);
  reference_gemm_kernel<<<grid, block, 0, stream>>>(gemm, exact_.data(), magnitude_.data());
  MGPU_CUDA_CHECK(cudaGetLastError());
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
}

GemmComparison GemmReference::compare(const float* c, int ldc, double relative_bound, cudaStream_t stream,
                                      const ReferenceEpilogue& epilogue) const {
  static_assert(sizeof(DeviceComparison) == 2 * sizeof(unsigned long long));
  auto* result = reinterpret_cast<DeviceComparison*>(result_.data());
  MGPU_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(DeviceComparison), stream));
  const std::size_t count = std::size_t(m_) * n_;
  const int blocks = static_cast<int>(std::min<std::size_t>((count + 255) / 256, 4096));
  compare_kernel<<<blocks, 256, 0, stream>>>(exact_.data(), magnitude_.data(), m_, n_, c, ldc, relative_bound, epilogue,
                                             result);
  MGPU_CUDA_CHECK(cudaGetLastError());
  DeviceComparison host{};
  MGPU_CUDA_CHECK(cudaMemcpyAsync(&host, result, sizeof host, cudaMemcpyDeviceToHost, stream));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
  GemmComparison comparison;
  comparison.mismatches = host.mismatches;
  double worst = 0.0;
  static_assert(sizeof worst == sizeof host.worst_ratio_bits);
  std::memcpy(&worst, &host.worst_ratio_bits, sizeof worst);
  comparison.worst_ratio = worst;
  return comparison;
}

}  // namespace mgpu::kernels
