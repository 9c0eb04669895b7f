// Purpose: the probe kernels: the empty kernel, the random fills, the fixed arithmetic and the hold on SMs.
#include <cuda_bf16.h>

#include <algorithm>
#include <string>

#include "kernels/probe_kernels.cuh"
#include "model/counter_rng.hpp"
#include "platform/cuda_check.hpp"

namespace mgpu::probe_kernels {
namespace {

constexpr int kThreads = 256;

__global__ void empty_kernel() {}

__device__ float random_value(std::uint64_t seed, std::size_t i) {
  return 2.0f * rng::uniform01(rng::hash(seed, rng::kInitialWeight, i)) - 1.0f;
}

__global__ void fill_random_kernel(float* values, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    values[i] = random_value(seed, i);
}

__global__ void fill_random_bf16_kernel(__nv_bfloat16* values, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    values[i] = __float2bfloat16(random_value(seed, i));
}

__global__ void fixed_work_kernel(int iterations, float* sink) {
  float value = static_cast<float>(threadIdx.x);
  for (int i = 0; i < iterations; ++i) value = fmaf(value, 0.999999f, 1e-7f);
  if (sink != nullptr && value == -1.0f) *sink = value;  // never true: the values stay positive
}

constexpr int kHoldThreads = 1024;

__device__ unsigned long long global_time_ns() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// One thread looks at the flag; the others wait at the barrier, which issues nothing.
__global__ void __launch_bounds__(kHoldThreads)
    hold_sm_kernel(const volatile int* release, unsigned long long limit_ns) {
  extern __shared__ unsigned char taken[];  // reserved, never read: it keeps a second block off this SM
  if (threadIdx.x == 0) {
    const unsigned long long start = global_time_ns();
    while (*release == 0 && global_time_ns() - start < limit_ns) __nanosleep(2000);
  }
  __syncthreads();
}

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 65536));
}

}  // namespace

void empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  MGPU_CUDA_CHECK_LAUNCH();
}

void fill_random(float* values, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_random_kernel<<<blocks_for(count), kThreads, 0, stream>>>(values, count, seed);
  MGPU_CUDA_CHECK_LAUNCH();
}

void fill_random_bf16(std::uint16_t* values, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  fill_random_bf16_kernel<<<blocks_for(count), kThreads, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(values), count,
                                                                      seed);
  MGPU_CUDA_CHECK_LAUNCH();
}

void fixed_work(int blocks, int iterations, float* sink, cudaStream_t stream) {
  fixed_work_kernel<<<blocks, 128, 0, stream>>>(iterations, sink);
  MGPU_CUDA_CHECK_LAUNCH();
}

void hold_sms(int sms, const volatile int* release, unsigned long long limit_ns, cudaStream_t stream) {
  int device = 0, per_sm = 0, per_block = 0, multiprocessors = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  MGPU_REQUIRE(sms > 0 && sms <= multiprocessors,
               "hold_sms: " + std::to_string(sms) + " SMs of " + std::to_string(multiprocessors));
  // All a block may take: nothing that needs shared memory (a GEMM's tiles) fits beside it.
  const int bytes = per_block;
  MGPU_REQUIRE(2 * bytes > per_sm, "hold_sms: a block cannot take more than half of an SM's shared memory here");
  MGPU_CUDA_CHECK(cudaFuncSetAttribute(hold_sm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  hold_sm_kernel<<<sms, kHoldThreads, bytes, stream>>>(release, limit_ns);
  MGPU_CUDA_CHECK_LAUNCH();
}

}  // namespace mgpu::probe_kernels
