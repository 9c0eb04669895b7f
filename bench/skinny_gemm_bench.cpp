// Purpose: our split-K skinny GEMM (src/kernels/skinny_gemm.cuh) against cuBLAS's default fp32 GEMM at the training
// step's narrow shapes, each timed the probe's way: a CUDA graph of 20 identical calls replayed between two events
// (launch gaps removed), the best of 5 replays, in microseconds per call. Behind docs/performance.md's "What the step
// does now". Usage: skinny_gemm_bench   (one GPU, the current device; prints one line per shape and configuration)
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "kernels/skinny_gemm.cuh"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "probes/graph_timing.hpp"

namespace {

using namespace mgpu;

constexpr int kCallsPerGraph = 20;
constexpr int kReplays = 5;

struct Shape {
  bool transpose_a;  // gemm(T, N): a layer's forward; gemm(N, N): its input gradient (src/train/cuda_mlp.cpp)
  int m, n, k;
  const char* what;
};

// The eligible products of large at local batch 32 (1 GPU) and 16 (2 GPUs), and of medium at 64 (with its input
// width rounded to 848: 847 is not 16-byte aligned, and the step leaves that product to cuBLASLt).
const Shape kShapes[] = {
    {true, 1024, 32, 4800, "large b32 layer 0 forward"},     {true, 1024, 32, 1024, "large b32 layer 1 forward"},
    {true, 512, 32, 1024, "large b32 layer 2 forward"},      {true, 512, 32, 512, "large b32 layer 3 forward"},
    {true, 256, 32, 512, "large b32 layer 4 forward"},       {false, 1024, 32, 1024, "large b32 layer 1 input grad"},
    {false, 512, 32, 512, "large b32 layer 3 input grad"},   {true, 1024, 16, 4800, "large b16 layer 0 forward"},
    {false, 1024, 16, 1024, "large b16 layer 1 input grad"}, {true, 256, 64, 848, "medium b64 layer 0 forward (848)"},
    {false, 128, 64, 64, "medium b64 layer 2 input grad"},
};

// Microseconds per call of `call` (which enqueues one GEMM on `stream`): the best of kReplays replays of a graph of
// kCallsPerGraph calls (graph_timing.hpp).
template <typename Call>
double graph_us_per_call(cudaStream_t stream, const Call& call) {
  call();  // outside the capture: kernel loading and the first-launch set-up
  const std::vector<double> ms = time_graph_replays(stream, kCallsPerGraph, kReplays, [&](int) { call(); });
  return *std::min_element(ms.begin(), ms.end()) * 1e3;
}

int run() {
  if (visible_cuda_device_count() == 0) {
    std::fprintf(stderr, "skinny_gemm_bench: error: no CUDA device visible\n");
    return 1;
  }
  CudaStream stream;
  CublasHandle cublas(stream.get());
  // Operands of the largest shape, uniform values (the kernels' speed does not depend on them); C written only.
  std::vector<float> values(static_cast<std::size_t>(1024) * 4800);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  DeviceBuffer<float> a(values.size()), b(values.size()), c(values.size());
  copy_to_device(a, values, stream.get());
  copy_to_device(b, values, stream.get());
  // Room for every configuration of the largest shape (16 parts of 1024 x 64).
  kernels::SkinnyWorkspaceMemory workspace(std::size_t{1} << 20, 1024, stream.get());

  std::printf("%-34s %-46s %10s %12s\n", "product", "kernel", "us/call", "GB/s of A");
  for (const Shape& shape : kShapes) {
    const int lda = shape.transpose_a ? shape.k : shape.m;
    const double a_bytes = 4.0 * shape.m * shape.k;
    const float one = 1.0f, zero = 0.0f;
    const double cublas_us = graph_us_per_call(stream.get(), [&] {
      MGPU_CUBLAS_CHECK(cublasSgemm(cublas.get(), shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, shape.m,
                                    shape.n, shape.k, &one, a.data(), lda, b.data(), shape.k, &zero, c.data(),
                                    shape.m));
    });
    std::printf("%-34s %-46s %10.2f %12.0f\n", shape.what, "cublasSgemm", cublas_us, a_bytes / cublas_us / 1e3);
    for (const kernels::SkinnyGemmConfig& config :
         kernels::skinny_gemm_configs(shape.m, shape.n, shape.k, workspace.view())) {
      const double us = graph_us_per_call(stream.get(), [&] {
        MGPU_CUDA_CHECK(kernels::skinny_gemm(shape.transpose_a, shape.m, shape.n, shape.k, a.data(), lda, b.data(),
                                             shape.k, c.data(), shape.m, false, config, stream.get(), false, {},
                                             workspace.view()));
      });
      const std::string name = "ours " + kernels::describe(config);
      std::printf("%-34s %-46s %10.2f %12.0f\n", "", name.c_str(), us, a_bytes / us / 1e3);
    }
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "skinny_gemm_bench: error: %s\n", error.what());
    return 1;
  }
}
