// Purpose: holds relu_dropout_backward_bias (src/kernels/cuda_kernels.cu) to a float64 CPU reference: the masked,
// scaled gradient exactly, its bf16 copy, and the bias gradient (column sums split over row blocks and added in a
// fixed order) within fp32 summation's bound, for odd widths, batch 1, row counts at, one under and one over a
// multiple of the row split, with and without accumulation; and two calls give the same bits. Skips without a GPU.
#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/reduction_workspace.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

constexpr float kDropProbability = 0.3f;

struct Inputs {
  std::vector<float> grad;
  std::vector<float> activation;  // about a third zero: dropped or cut by the ReLU
  std::vector<float> bias_start;  // what bias_grad holds before an accumulating call
};

Inputs random_inputs(int batch, int width) {
  std::mt19937 random(97u + static_cast<unsigned>(batch * 31 + width));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Inputs inputs;
  const std::size_t count = static_cast<std::size_t>(batch) * width;
  inputs.grad.resize(count);
  inputs.activation.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    inputs.grad[i] = uniform(random);
    const float h = uniform(random);
    inputs.activation[i] = h < -0.33f ? 0.0f : std::fabs(h);
  }
  inputs.bias_start.resize(width);
  for (float& value : inputs.bias_start) value = uniform(random);
  return inputs;
}

struct Outputs {
  std::vector<float> grad;
  std::vector<__nv_bfloat16> grad_bf16;
  std::vector<float> bias;
};

Outputs run_kernel(const Inputs& inputs, int batch, int width, bool accumulate, cudaStream_t stream) {
  DeviceBuffer<float> grad(inputs.grad.size());
  DeviceBuffer<float> activation(inputs.activation.size());
  DeviceBuffer<__nv_bfloat16> grad_bf16(inputs.grad.size());
  DeviceBuffer<float> bias(width);
  kernels::ReductionWorkspaceMemory workspace(kernels::bias_gradient_workspace_floats(batch, width),
                                              kernels::bias_gradient_workspace_counters(batch, width), stream);
  copy_to_device(grad, inputs.grad, stream);
  copy_to_device(activation, inputs.activation, stream);
  // Without accumulation every bias element must be written: NaN stays and fails.
  copy_to_device(bias, accumulate ? inputs.bias_start : std::vector<float>(width, std::nanf("")), stream);
  kernels::relu_dropout_backward_bias(grad.data(), activation.data(), bias.data(), batch, width, kDropProbability,
                                      accumulate, stream, grad_bf16.data(), workspace.view());
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {copy_to_host(grad, stream), copy_to_host(grad_bf16, stream), copy_to_host(bias, stream)};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class ReluDropoutBackwardBiasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
    }
  }

  void check(int batch, int width, bool accumulate) {
    const std::string shape = std::to_string(batch) + " x " + std::to_string(width) +
                              (accumulate ? " accumulate" : "") + " (" +
                              std::to_string(kernels::bias_gradient_row_blocks(batch, width)) + " row blocks)";
    const Inputs inputs = random_inputs(batch, width);
    CudaStream stream;
    const Outputs out = run_kernel(inputs, batch, width, accumulate, stream.get());
    const float keep_scale = kernels::dropout_keep_scale(kDropProbability);
    int wrong_grad = 0;
    int wrong_bias = 0;
    for (int unit = 0; unit < width; ++unit) {
      double sum = accumulate ? inputs.bias_start[unit] : 0.0;
      double magnitude = accumulate ? std::fabs(inputs.bias_start[unit]) : 0.0;
      for (int row = 0; row < batch; ++row) {
        const std::size_t i = static_cast<std::size_t>(row) * width + unit;
        const float expected = inputs.activation[i] > 0.0f ? inputs.grad[i] * keep_scale : 0.0f;  // one rounding
        const float expected_bf16 = __bfloat162float(__float2bfloat16(expected));
        if (out.grad[i] != expected || __bfloat162float(out.grad_bf16[i]) != expected_bf16) ++wrong_grad;
        sum += expected;
        magnitude += std::fabs(expected);
      }
      // fp32 summation of batch + 1 terms in any order: (batch + 1) 2^-24 sum |x|, with a margin of 2.
      const double bound = 2.0 * (batch + 1) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      if (!(std::fabs(out.bias[unit] - sum) <= bound)) ++wrong_bias;
    }
    EXPECT_EQ(wrong_grad, 0) << shape;
    EXPECT_EQ(wrong_bias, 0) << shape;
    const Outputs again = run_kernel(inputs, batch, width, accumulate, stream.get());
    EXPECT_TRUE(same_bits(again.bias, out.bias)) << shape << ": the bias gradient changed between two calls";
    EXPECT_TRUE(same_bits(again.grad, out.grad)) << shape;
  }
};

TEST_F(ReluDropoutBackwardBiasTest, TallMatricesAreSplitOverRows) {
  EXPECT_GT(kernels::bias_gradient_row_blocks(4096, 1024), 8);
  EXPECT_GT(kernels::bias_gradient_row_blocks(4096, 64), 8);
  EXPECT_EQ(kernels::bias_gradient_row_blocks(32, 1024), 1);  // small batches: one pass per column block
}

TEST_F(ReluDropoutBackwardBiasTest, MatchesFloat64AcrossRowSplits) {
  for (const int width : {1, 3, 31, 33, 64, 100, 1024}) {
    std::vector<int> batches = {1, 2, 17, 63, 64, 65};
    // At, one under and one over an exact multiple of the row split of a tall matrix.
    for (const int tall : {1024, 4096}) {
      const int row_blocks = kernels::bias_gradient_row_blocks(tall, width);
      const int rows_per_block = (tall + row_blocks - 1) / row_blocks;
      const int multiple = rows_per_block * row_blocks;
      batches.insert(batches.end(), {multiple - 1, multiple, multiple + 1});
    }
    for (const int batch : batches) check(batch, width, /*accumulate=*/false);
  }
}

TEST_F(ReluDropoutBackwardBiasTest, AccumulatesIntoTheBiasGradient) {
  for (const int batch : {5, 4096}) check(batch, 1000, /*accumulate=*/true);
}

TEST_F(ReluDropoutBackwardBiasTest, WithoutBiasGradientNeedsNoWorkspace) {
  const int batch = 4096;
  const int width = 512;
  const Inputs inputs = random_inputs(batch, width);
  CudaStream stream;
  DeviceBuffer<float> grad(inputs.grad.size());
  DeviceBuffer<float> activation(inputs.activation.size());
  copy_to_device(grad, inputs.grad, stream.get());
  copy_to_device(activation, inputs.activation, stream.get());
  kernels::relu_dropout_backward_bias(grad.data(), activation.data(), nullptr, batch, width, kDropProbability, false,
                                      stream.get());
  const std::vector<float> out = copy_to_host(grad, stream.get());
  const float keep_scale = kernels::dropout_keep_scale(kDropProbability);
  int wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] != (inputs.activation[i] > 0.0f ? inputs.grad[i] * keep_scale : 0.0f)) ++wrong;
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace mgpu
