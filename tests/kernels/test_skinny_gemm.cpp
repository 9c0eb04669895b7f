// Purpose: holds our split-K skinny GEMM (src/kernels/skinny_gemm.cu) to a float64 CPU product for every tile width,
// split count, block shape and way of summing the parts, both layouts of A, ragged and padded shapes, accumulation,
// products wider than one tile, and the step's own shapes; and checks that it writes exactly C's m x n elements,
// reproducibly, and that both sums give the same bits. Skips without a CUDA device with thread-block clusters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/skinny_gemm.cuh"
#include "model/synthetic_data.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

struct Shape {
  bool transpose_a;
  int m, n, k;
  int pad = 0;  // extra leading-dimension elements of A, B and C beyond the next multiple of 4 (padding must be neither
                // read nor written; leading dimensions that are no multiple of 4 take the kernel's 4-byte copies)
  bool tight = false;  // leading dimensions exactly the rows (no rounding to a multiple of 4), pad ignored
};

std::string describe(const Shape& shape, const kernels::SkinnyGemmConfig& config) {
  return std::string(shape.transpose_a ? "T" : "N") + " m=" + std::to_string(shape.m) +
         " n=" + std::to_string(shape.n) + " k=" + std::to_string(shape.k) + " pad=" + std::to_string(shape.pad) +
         (shape.tight ? " tight" : "") + " (" + kernels::describe(config) + ")";
}

// Room for every configuration of the shapes below (up to 16 parts of 1024 x 64), counters zeroed.
constexpr std::size_t kWorkspaceFloats = std::size_t{1} << 20;
constexpr std::size_t kWorkspaceCounters = 1024;

// The offered configurations and, for each narrow one in a cluster, the same parts summed by the last block: not
// offered to the tuner (skinny_gemm.cu says why), but accepted by the launcher, so tested too.
std::vector<kernels::SkinnyGemmConfig> configs_to_test(int m, int n, int k, const kernels::SkinnyWorkspace& workspace) {
  std::vector<kernels::SkinnyGemmConfig> configs = kernels::skinny_gemm_configs(m, n, k, workspace);
  const std::size_t offered = configs.size();
  for (std::size_t index = 0; index < offered; ++index) {
    kernels::SkinnyGemmConfig twin = configs[index];
    if (twin.wide || twin.splits == 1) continue;
    twin.reduction = kernels::SkinnyReduction::last_block;
    configs.push_back(twin);
  }
  return configs;
}

class SkinnyGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
    }
    if (kernels::skinny_gemm_configs(64, 32, 64).empty()) {
      GTEST_SKIP() << "the device has no thread-block clusters (compute capability below 9.0): the kernel is never "
                      "offered there";
    }
  }

  // Runs every configuration on `shape` and compares each element with the float64 product of the same floats.
  // The bound per element is fp32 accumulation's: k * 2^-24 * sum |a||b| with a margin of 4.
  void check(const Shape& shape, bool accumulate) {
    const auto leading = [&](int rows) { return shape.tight ? rows : (rows + 3) / 4 * 4 + shape.pad; };
    const int lda = leading(shape.transpose_a ? shape.k : shape.m);
    const int ldb = leading(shape.k);
    const int ldc = leading(shape.m);
    std::mt19937 random(1234u + static_cast<unsigned>(shape.m * 7 + shape.n * 13 + shape.k));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<std::size_t>(lda) * (shape.transpose_a ? shape.m : shape.k));
    std::vector<float> b(static_cast<std::size_t>(ldb) * shape.n);
    std::vector<float> c_start(static_cast<std::size_t>(ldc) * shape.n);
    for (float& value : a) value = uniform(random);
    for (float& value : b) value = uniform(random);
    for (float& value : c_start) value = uniform(random);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto in_c = [&](std::size_t index) { return static_cast<int>(index % ldc) < shape.m; };
    if (!accumulate) {
      // Unwritten outputs stay NaN and fail; padding gets a sentinel that must survive.
      for (std::size_t index = 0; index < c_start.size(); ++index) c_start[index] = in_c(index) ? nan : 7.0f;
    }
    const auto a_at = [&](int i, int kk) {
      return shape.transpose_a ? a[static_cast<std::size_t>(i) * lda + kk] : a[static_cast<std::size_t>(kk) * lda + i];
    };

    // The float64 product and its bound, once for all configurations.
    std::vector<double> exact(c_start.size(), 0.0);
    std::vector<double> bound(c_start.size(), 0.0);
    for (int j = 0; j < shape.n; ++j) {
      for (int i = 0; i < shape.m; ++i) {
        const std::size_t index = static_cast<std::size_t>(j) * ldc + i;
        double sum = accumulate ? c_start[index] : 0.0;
        double magnitude = accumulate ? std::fabs(c_start[index]) : 0.0;
        for (int kk = 0; kk < shape.k; ++kk) {
          const double term = static_cast<double>(a_at(i, kk)) * b[static_cast<std::size_t>(j) * ldb + kk];
          sum += term;
          magnitude += std::fabs(term);
        }
        exact[index] = sum;
        bound[index] = 4.0 * (shape.k + 1) * std::ldexp(1.0, -24) * magnitude + 1e-30;
      }
    }

    CudaStream stream;
    DeviceBuffer<float> a_device(a.size());
    DeviceBuffer<float> b_device(b.size());
    DeviceBuffer<float> c_device(c_start.size());
    kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
    copy_to_device(a_device, a, stream.get());
    copy_to_device(b_device, b, stream.get());
    const std::vector<kernels::SkinnyGemmConfig> configs = configs_to_test(shape.m, shape.n, shape.k, workspace.view());
    ASSERT_FALSE(configs.empty()) << "no configuration for an eligible shape";
    for (std::size_t index = 0; index < 2 * configs.size(); ++index) {
      // Every configuration with A read after the wait for the kernel ahead and, stable, before it.
      const kernels::SkinnyGemmConfig& config = configs[index / 2];
      const bool a_is_stable = index % 2 == 1;
      copy_to_device(c_device, c_start, stream.get());
      MGPU_CUDA_CHECK(kernels::skinny_gemm(shape.transpose_a, shape.m, shape.n, shape.k, a_device.data(), lda,
                                           b_device.data(), ldb, c_device.data(), ldc, accumulate, config, stream.get(),
                                           a_is_stable, {}, workspace.view()));
      const std::vector<float> c = copy_to_host(c_device, stream.get());
      int wrong = 0;
      for (std::size_t index = 0; index < c.size(); ++index) {
        const int i = static_cast<int>(index % ldc);
        const int j = static_cast<int>(index / ldc);
        if (in_c(index) && !(std::fabs(c[index] - exact[index]) <= bound[index])) {
          if (++wrong <= 3) {
            ADD_FAILURE() << describe(shape, config) << ": C(" << i << ", " << j << ") = " << c[index]
                          << ", float64 gives " << exact[index] << " (bound " << bound[index] << ")";
          }
        } else if (!in_c(index) && c[index] != c_start[index] && ++wrong <= 3) {
          ADD_FAILURE() << describe(shape, config) << ": padding element " << i << " of column " << j << " was written";
        }
      }
      EXPECT_EQ(wrong, 0) << describe(shape, config);
    }
  }
};

TEST_F(SkinnyGemmTest, TheStepsShapesMatchFloat64) {
  // Large at local batch 32 and 16 (1 and 2 GPUs), medium at 64: forward (A transposed) and input gradient.
  for (const Shape& shape : {Shape{true, 1024, 32, 4800}, Shape{false, 1024, 32, 1024}, Shape{true, 512, 16, 1024},
                             Shape{false, 512, 16, 512}, Shape{true, 256, 64, 847}, Shape{false, 128, 64, 64}}) {
    check(shape, false);
  }
}

TEST_F(SkinnyGemmTest, ProductsWiderThanOneTileMatchFloat64) {
  // A grid of column tiles: medium at local batch 128 (its input layer's rows of 847 floats) and 1024, large at 128,
  // and ragged widths just past one, two and four tiles of 64, with wide blocks (K of 2048 and more) too.
  for (const Shape& shape :
       {Shape{true, 256, 128, 847, 0, true}, Shape{false, 256, 128, 128}, Shape{true, 128, 1024, 256},
        Shape{true, 1024, 128, 1024}, Shape{true, 67, 129, 131, 4}, Shape{false, 130, 257, 75, 0, true},
        Shape{true, 200, 65, 2100}, Shape{false, 64, 193, 2049, 3}}) {
    check(shape, false);
  }
  check(Shape{false, 100, 130, 300, 4}, true);
}

TEST_F(SkinnyGemmTest, RaggedAndPaddedShapesMatchFloat64) {
  // Nothing a multiple of a tile: edges in every dimension, one column, K shorter than one stage and than the splits.
  for (const Shape& shape : {Shape{true, 67, 17, 131, 4}, Shape{false, 67, 17, 131, 8}, Shape{true, 3, 32, 256},
                             Shape{false, 256, 33, 3}, Shape{true, 130, 1, 1000, 4}, Shape{false, 5, 64, 7, 12},
                             Shape{true, 200, 50, 300}, Shape{false, 201, 3, 33}, Shape{false, 300, 40, 2100, 4}}) {
    check(shape, false);
  }
}

TEST_F(SkinnyGemmTest, UnalignedOperandsMatchFloat64) {
  // Leading dimensions that are no multiple of 4 (4-byte copies): medium's input layer (rows of 847 floats) and the
  // input gradients of an output layer of width 3, then odd paddings and tight ragged shapes.
  for (const Shape& shape :
       {Shape{true, 256, 64, 847, 0, true}, Shape{false, 64, 64, 3, 0, true}, Shape{false, 256, 32, 3, 0, true},
        Shape{true, 67, 17, 131, 1}, Shape{false, 67, 17, 131, 3}, Shape{true, 130, 33, 501, 0, true},
        Shape{true, 130, 33, 2049, 0, true}, Shape{false, 201, 5, 77, 2}}) {
    check(shape, false);
  }
  check(Shape{true, 100, 20, 499, 1}, true);
}

TEST_F(SkinnyGemmTest, AccumulateAddsToC) {
  for (const Shape& shape : {Shape{true, 100, 20, 500, 4}, Shape{false, 129, 40, 257}}) check(shape, true);
}

TEST_F(SkinnyGemmTest, ADependentLaunchReadsTheProductOfTheKernelAhead) {
  // C_{t+1} = A C_t, eight times back to back: each launch may start while the one ahead finishes (dependent launch,
  // A read early) and must read that one's C only once it is complete. A launch that read its B too early would see
  // the NaN every C starts with, or a partial product. Compared with the float64 chain, ||out - ref|| / ||ref||.
  const int m = 1024, n = 32, steps = 8;
  std::mt19937 random(4321u);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(m) * m), c0(static_cast<std::size_t>(m) * n);
  const float scale = 1.0f / std::sqrt(static_cast<float>(m));  // keeps every C_t of order 1
  for (float& value : a) value = uniform(random) * scale;
  for (float& value : c0) value = uniform(random);
  CudaStream stream;
  DeviceBuffer<float> a_device(a.size());
  kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
  std::vector<DeviceBuffer<float>> c_device;
  for (int t = 0; t <= steps; ++t) c_device.emplace_back(c0.size());
  copy_to_device(a_device, a, stream.get());
  copy_to_device(c_device[0], c0, stream.get());
  const std::vector<float> nans(c0.size(), std::numeric_limits<float>::quiet_NaN());
  for (int t = 1; t <= steps; ++t) copy_to_device(c_device[t], nans, stream.get());
  // Configurations spread over the list: cluster and last-block sums.
  const std::vector<kernels::SkinnyGemmConfig> configs = configs_to_test(m, n, m, workspace.view());
  for (int t = 0; t < steps; ++t) {
    const bool transpose_a = t % 2 == 0;  // A is read as A^T every other step
    MGPU_CUDA_CHECK(kernels::skinny_gemm(transpose_a, m, n, m, a_device.data(), m, c_device[t].data(), m,
                                         c_device[t + 1].data(), m, false, configs[t * configs.size() / steps],
                                         stream.get(), /*a_is_stable=*/true, {}, workspace.view()));
  }
  const std::vector<float> out = copy_to_host(c_device[steps], stream.get());
  std::vector<double> reference(c0.begin(), c0.end()), next(c0.size());
  for (int t = 0; t < steps; ++t) {
    const bool transpose_a = t % 2 == 0;
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double sum = 0.0;
        for (int kk = 0; kk < m; ++kk) {
          const float a_ik =
              transpose_a ? a[static_cast<std::size_t>(i) * m + kk] : a[static_cast<std::size_t>(kk) * m + i];
          sum += static_cast<double>(a_ik) * reference[static_cast<std::size_t>(j) * m + kk];
        }
        next[static_cast<std::size_t>(j) * m + i] = sum;
      }
    }
    reference.swap(next);
  }
  double error = 0.0, norm = 0.0;
  for (std::size_t index = 0; index < out.size(); ++index) {
    error += (out[index] - reference[index]) * (out[index] - reference[index]);
    norm += reference[index] * reference[index];
  }
  const double relative = std::sqrt(error / norm);
  EXPECT_LT(relative, 1e-5) << "relative error of the chained products (NaN: a launch read an unwritten C)";
}

TEST_F(SkinnyGemmTest, EpiloguesMatchFloat64) {
  // C = op(A) B as a layer's activations (row i = unit, column j = sample), then each epilogue against the float64
  // product put through the same formula (synthetic::dropout_keep for the mask), for every configuration, A read
  // early and late. Unwritten elements stay NaN and fail.
  const int m = 200, n = 32, k = 2100;  // ragged: 200 rows are no whole number of 64-row tiles; deep enough for wide
  std::mt19937 random(777u);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
  std::vector<float> bias(m), activation(static_cast<std::size_t>(m) * n);
  for (float& value : a) value = uniform(random);
  for (float& value : b) value = uniform(random);
  for (float& value : bias) value = uniform(random);
  for (float& value : activation) value = uniform(random) > 0.0f ? uniform(random) + 1.0f : 0.0f;  // half masked
  kernels::StepParams params;
  params.seed = 5;
  params.run = 2;
  params.step = 7;
  params.first_sample = 1000;
  const float drop_probability = 0.3f;
  const std::uint32_t layer = 2;
  CudaStream stream;
  DeviceBuffer<float> a_device(a.size()), b_device(b.size()), c_device(static_cast<std::size_t>(m) * n);
  DeviceBuffer<float> bias_device(bias.size()), activation_device(activation.size());
  DeviceBuffer<kernels::StepParams> params_device(1);
  kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
  copy_to_device(a_device, a, stream.get());
  copy_to_device(b_device, b, stream.get());
  copy_to_device(bias_device, bias, stream.get());
  copy_to_device(activation_device, activation, stream.get());
  copy_to_device(params_device, std::vector<kernels::StepParams>{params}, stream.get());

  kernels::SkinnyEpilogue forward;
  forward.kind = kernels::SkinnyEpilogue::Kind::bias_relu_dropout;
  forward.bias = bias_device.data();
  forward.params = params_device.data();
  forward.layer = layer;
  forward.drop_probability = drop_probability;
  forward.keep_scale = kernels::dropout_keep_scale(drop_probability);
  kernels::SkinnyEpilogue backward;
  backward.kind = kernels::SkinnyEpilogue::Kind::relu_dropout_backward;
  backward.activation = activation_device.data();
  backward.keep_scale = kernels::dropout_keep_scale(drop_probability);

  int kept = 0, dropped = 0;
  for (const kernels::SkinnyEpilogue& epilogue : {forward, backward}) {
    // The float64 result and its bound (fp32 accumulation's, as in check(), times the scale).
    std::vector<double> exact(static_cast<std::size_t>(m) * n), bound(exact.size());
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double sum = 0.0, magnitude = 0.0;
        for (int kk = 0; kk < k; ++kk) {
          const double term =
              static_cast<double>(a[static_cast<std::size_t>(i) * k + kk]) * b[static_cast<std::size_t>(j) * k + kk];
          sum += term;
          magnitude += std::fabs(term);
        }
        const std::size_t index = static_cast<std::size_t>(j) * m + i;
        double value = 0.0;
        if (epilogue.kind == kernels::SkinnyEpilogue::Kind::bias_relu_dropout) {
          const bool keep =
              synthetic::dropout_keep(params.seed, params.run, params.step, layer, params.first_sample + j,
                                      static_cast<std::uint32_t>(i), drop_probability);
          (keep ? kept : dropped) += 1;
          value = keep ? std::max(sum + bias[i], 0.0) * epilogue.keep_scale : 0.0;
          magnitude += std::fabs(bias[i]);
        } else {
          value = activation[index] > 0.0f ? sum * epilogue.keep_scale : 0.0;
        }
        exact[index] = value;
        bound[index] = 4.0 * (k + 2) * std::ldexp(1.0, -24) * magnitude * epilogue.keep_scale + 1e-30;
      }
    }
    const std::vector<float> nans(exact.size(), std::numeric_limits<float>::quiet_NaN());
    const std::vector<kernels::SkinnyGemmConfig> configs = configs_to_test(m, n, k, workspace.view());
    for (std::size_t index = 0; index < 2 * configs.size(); ++index) {
      const kernels::SkinnyGemmConfig& config = configs[index / 2];
      copy_to_device(c_device, nans, stream.get());
      MGPU_CUDA_CHECK(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m,
                                           false, config, stream.get(), index % 2 == 1, epilogue, workspace.view()));
      const std::vector<float> c = copy_to_host(c_device, stream.get());
      int wrong = 0;
      for (std::size_t e = 0; e < c.size(); ++e) {
        if (!(std::fabs(c[e] - exact[e]) <= bound[e]) && ++wrong <= 3) {
          ADD_FAILURE() << "epilogue " << static_cast<int>(epilogue.kind) << ", " << describe({true, m, n, k}, config)
                        << ": C(" << e % m << ", " << e / m << ") = " << c[e] << ", float64 gives " << exact[e];
        }
      }
      EXPECT_EQ(wrong, 0);
    }
  }
  EXPECT_GT(dropped, 0) << "the dropout mask dropped nothing: the test would not see a missing mask";
  EXPECT_GT(kept, dropped) << "p = 0.3 keeps most units";
  // An epilogue cannot be combined with accumulation.
  EXPECT_EQ(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m, true,
                                 {32, 1}, stream.get(), false, forward),
            cudaErrorInvalidValue);
}

TEST_F(SkinnyGemmTest, EveryConfigurationIsOfferedWhereItFits) {
  // 16-column tiles always, wider ones only up to twice n; never more parts than K has stages (of 64 K values, 128
  // for wide blocks). Without a workspace: the narrow block with 1 to 8 parts in a cluster, the wide one unsplit.
  const std::size_t per_column_without = 4 + 1;
  EXPECT_EQ(kernels::skinny_gemm_configs(1024, 64, 4800).size(), 3 * per_column_without);
  // With one: also the wide block with 2 to 16 parts summed by the last block.
  CudaStream stream;
  kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
  const std::vector<kernels::SkinnyGemmConfig> all = kernels::skinny_gemm_configs(1024, 64, 4800, workspace.view());
  EXPECT_EQ(all.size(), 3 * (per_column_without + 4));
  for (const kernels::SkinnyGemmConfig& config : all) {
    if (config.splits == 1) continue;
    EXPECT_EQ(config.reduction, config.wide ? kernels::SkinnyReduction::last_block : kernels::SkinnyReduction::cluster)
        << kernels::describe(config) << ": narrow blocks are offered in clusters, wide ones with last-block sums";
    EXPECT_LE(kernels::skinny_workspace_floats(1024, 64, config), kWorkspaceFloats) << kernels::describe(config);
  }
  // 100 values of K: 2 narrow stages (1 or 2 parts), and too shallow for wide blocks.
  const std::vector<kernels::SkinnyGemmConfig> short_k = kernels::skinny_gemm_configs(1024, 16, 100, workspace.view());
  ASSERT_EQ(short_k.size(), 2u);
  EXPECT_EQ(short_k[1].splits, 2);
  EXPECT_EQ(short_k[1].reduction, kernels::SkinnyReduction::cluster);
  // Wide blocks from a depth of 2048 on: unsplit and 2 to 16 parts (16 stages of 128).
  const auto wide_count = [&](int k) {
    const std::vector<kernels::SkinnyGemmConfig> configs = kernels::skinny_gemm_configs(1024, 16, k, workspace.view());
    return std::count_if(configs.begin(), configs.end(), [](const kernels::SkinnyGemmConfig& c) { return c.wide; });
  };
  EXPECT_EQ(wide_count(2047), 0);
  EXPECT_EQ(wide_count(2048), 5);
  // A workspace one float or one counter short leaves out exactly the configurations that need more.
  const auto offered_within = [](const kernels::SkinnyWorkspace& short_one) {
    const std::vector<kernels::SkinnyGemmConfig> offered = kernels::skinny_gemm_configs(1024, 64, 4800, short_one);
    for (const kernels::SkinnyGemmConfig& config : offered) {
      EXPECT_LE(kernels::skinny_workspace_floats(1024, 64, config), short_one.partial_floats)
          << kernels::describe(config);
      EXPECT_LE(kernels::skinny_workspace_counters(1024, 64, config), short_one.counter_count)
          << kernels::describe(config);
    }
    return offered.size();
  };
  kernels::SkinnyWorkspace short_floats = workspace.view();
  short_floats.partial_floats =
      kernels::skinny_workspace_floats(1024, 64, {64, 16, kernels::SkinnyReduction::last_block}) - 1;
  // (16 parts of any tile width need the same 1024 x 64 x 16 floats: 3 widths.)
  EXPECT_EQ(offered_within(short_floats), all.size() - 3);
  kernels::SkinnyWorkspace short_counters = workspace.view();
  short_counters.counter_count =
      kernels::skinny_workspace_counters(1024, 64, {16, 2, kernels::SkinnyReduction::last_block}) - 1;
  offered_within(short_counters);
  // Past one tile of 64 columns every tile width is offered, up to 2^21 outputs.
  EXPECT_EQ(kernels::skinny_gemm_configs(1024, 65, 4800).size(), 3 * per_column_without);
  EXPECT_FALSE(kernels::skinny_gemm_configs(1024, 2048, 4800, workspace.view()).empty());
  EXPECT_TRUE(kernels::skinny_gemm_configs(1024, 2049, 4800, workspace.view()).empty());
  EXPECT_FALSE(kernels::skinny_gemm_configs(1 << 21, 64, 64).empty());  // one tile wide: any number of rows
}

TEST_F(SkinnyGemmTest, LastBlockSumsGiveTheClusterBitsAndLeaveTheCountersZero) {
  // The same parts summed in the same order: a last-block sum must give exactly the cluster's bits, call after call
  // (each call must leave its tile counters at zero, or the next would sum too early or never), at the step's layer 0
  // shape and a ragged one.
  for (const Shape& shape : {Shape{true, 1024, 32, 4800}, Shape{false, 201, 17, 700}}) {
    const int lda = shape.transpose_a ? shape.k : shape.m;
    std::mt19937 random(31u + static_cast<unsigned>(shape.m));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> a(static_cast<std::size_t>(shape.m) * shape.k), b(static_cast<std::size_t>(shape.k) * shape.n);
    for (float& value : a) value = uniform(random);
    for (float& value : b) value = uniform(random);
    CudaStream stream;
    DeviceBuffer<float> a_device(a.size()), b_device(b.size()), c_device(static_cast<std::size_t>(shape.m) * shape.n);
    kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
    copy_to_device(a_device, a, stream.get());
    copy_to_device(b_device, b, stream.get());
    const auto product = [&](const kernels::SkinnyGemmConfig& config) {
      MGPU_CUDA_CHECK(kernels::skinny_gemm(shape.transpose_a, shape.m, shape.n, shape.k, a_device.data(), lda,
                                           b_device.data(), shape.k, c_device.data(), shape.m, false, config,
                                           stream.get(), false, {}, workspace.view()));
      return copy_to_host(c_device, stream.get());
    };
    for (int splits : {2, 4, 8}) {
      const std::vector<float> cluster = product({16, splits, kernels::SkinnyReduction::cluster});
      for (int call = 0; call < 3; ++call) {
        EXPECT_EQ(product({16, splits, kernels::SkinnyReduction::last_block}), cluster)
            << describe(shape, {16, splits, kernels::SkinnyReduction::last_block}) << ", call " << call;
      }
    }
    std::vector<unsigned> counters(kWorkspaceCounters);
    MGPU_CUDA_CHECK(cudaMemcpyAsync(counters.data(), workspace.view().counters, counters.size() * sizeof(unsigned),
                                    cudaMemcpyDeviceToHost, stream.get()));
    MGPU_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    EXPECT_EQ(std::count(counters.begin(), counters.end(), 0u), static_cast<long>(counters.size()))
        << "a tile counter was left non-zero";
  }
}

TEST_F(SkinnyGemmTest, RepeatedCallsGiveTheSameBitsAndBadArgumentsAreRefused) {
  const int m = 1024, n = 32, k = 4800;
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
  std::mt19937 random(99u);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& value : a) value = uniform(random);
  for (float& value : b) value = uniform(random);
  CudaStream stream;
  DeviceBuffer<float> a_device(a.size()), b_device(b.size()), c_device(static_cast<std::size_t>(m) * n);
  copy_to_device(a_device, a, stream.get());
  copy_to_device(b_device, b, stream.get());
  kernels::SkinnyWorkspaceMemory workspace(kWorkspaceFloats, kWorkspaceCounters, stream.get());
  for (const kernels::SkinnyGemmConfig& config :
       {kernels::SkinnyGemmConfig{32, 8}, kernels::SkinnyGemmConfig{32, 8, kernels::SkinnyReduction::last_block, true},
        kernels::SkinnyGemmConfig{32, 16, kernels::SkinnyReduction::last_block}}) {
    std::vector<float> first;
    for (int call = 0; call < 3; ++call) {
      MGPU_CUDA_CHECK(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m,
                                           false, config, stream.get(), false, {}, workspace.view()));
      const std::vector<float> c = copy_to_host(c_device, stream.get());
      if (call == 0) first = c;
      EXPECT_EQ(c, first) << kernels::describe(config) << ": call " << call << " differs from the first";
    }
  }
  // Part counts that are no power of two, or over the cluster's 8 or the last block's 16; a wide block in a cluster;
  // a last-block sum without a workspace or with one too small.
  for (const kernels::SkinnyGemmConfig& config :
       {kernels::SkinnyGemmConfig{32, 3}, kernels::SkinnyGemmConfig{32, 16},
        kernels::SkinnyGemmConfig{32, 32, kernels::SkinnyReduction::last_block},
        kernels::SkinnyGemmConfig{32, 2, kernels::SkinnyReduction::cluster, true}}) {
    EXPECT_EQ(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m, false,
                                   config, stream.get(), false, {}, workspace.view()),
              cudaErrorInvalidValue)
        << kernels::describe(config);
  }
  const kernels::SkinnyGemmConfig last_block{32, 8, kernels::SkinnyReduction::last_block};
  EXPECT_EQ(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m, false,
                                 last_block, stream.get()),
            cudaErrorInvalidValue);
  kernels::SkinnyWorkspace too_small = workspace.view();
  too_small.partial_floats = kernels::skinny_workspace_floats(m, n, last_block) - 1;
  EXPECT_EQ(kernels::skinny_gemm(true, m, n, k, a_device.data(), k, b_device.data(), k, c_device.data(), m, false,
                                 last_block, stream.get(), false, {}, too_small),
            cudaErrorInvalidValue);
  // More column tiles of 16 than a grid holds (65535); refused before any operand is read.
  EXPECT_EQ(kernels::skinny_gemm(true, m, 16 * 65535 + 1, k, a_device.data(), k, b_device.data(), k, c_device.data(), m,
                                 false, {64, 1}, stream.get()),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::skinny_gemm(true, m, n, k, a_device.data(), k - 1, b_device.data(), k, c_device.data(), m, false,
                                 {32, 1}, stream.get()),
            cudaErrorInvalidValue);
  // An operand that is not even 4-byte aligned is refused (4-byte copies at the least).
  const auto* misaligned = reinterpret_cast<const float*>(reinterpret_cast<const char*>(b_device.data()) + 2);
  EXPECT_EQ(kernels::skinny_gemm(true, m, n, k - 8, a_device.data(), k, misaligned, k, c_device.data(), m, false,
                                 {32, 1}, stream.get()),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace mgpu
