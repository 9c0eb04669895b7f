// Purpose: holds the split passes of --precision tf32x3 (src/kernels/tf32_split.cu) to the host's arithmetic of
// src/model/tf32_split.hpp: the device's rounding (PTX cvt.rna.tf32.f32) gives the host's bits, each part lands where
// the layout puts it (either order, odd widths), and the weights' split finds every weight's layer and row from any
// range's flat offset while leaving the biases' slots alone. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/tf32_split.cuh"
#include "model/mlp_spec.hpp"
#include "model/tf32_split.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

class Tf32SplitKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  }
};

std::uint32_t bits_of(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

// The same value: the same bits, or NaN on both sides (the device's NaN may carry another payload).
bool same(float device, float host) {
  return (std::isnan(device) && std::isnan(host)) || bits_of(device) == bits_of(host);
}

// Normal values of many magnitudes and both signs, ties of the rounding (exactly half of TF32's last bit), the carry
// into the exponent, zeros, infinities and NaN.
std::vector<float> test_values(std::size_t count) {
  std::mt19937_64 generator(5);
  std::uniform_real_distribution<double> exponent(-60.0, 60.0);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f + 0x1p-11f,
                               -1.0f - 0x1p-11f,
                               1.0f + 0x1p-10f + 0x1p-11f,
                               2.0f - 0x1p-23f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  while (values.size() < count) {
    const auto x = static_cast<float>(std::exp2(exponent(generator)));
    values.push_back(generator() % 2 == 0 ? x : -x);
  }
  return values;
}

TEST_F(Tf32SplitKernels, RowsSplitAsTheHostSplitsThemInEitherOrder) {
  constexpr int kRows = 37, kWidth = 13;  // odd: no row starts on a 16-byte boundary
  const std::vector<float> values = test_values(std::size_t(kRows) * kWidth);
  CudaStream stream;
  DeviceBuffer<float> source(values.size());
  copy_to_device(source, values, stream.get());
  for (bool small_first : {false, true}) {
    DeviceBuffer<float> split(2 * values.size());
    kernels::fill(split.data(), split.size(), std::numeric_limits<float>::quiet_NaN(), stream.get());
    kernels::split_rows(source.data(), kRows, {split.data(), kWidth, small_first}, stream.get());
    const std::vector<float> got = copy_to_host(split, stream.get());
    for (int r = 0; r < kRows; ++r) {
      for (int c = 0; c < kWidth; ++c) {
        const float x = values[std::size_t(r) * kWidth + c];
        const tf32::Split parts = tf32::split(x);
        const std::size_t first = std::size_t(r) * 2 * kWidth + c;
        const float big = got[first + (small_first ? kWidth : 0)], small = got[first + (small_first ? 0 : kWidth)];
        ASSERT_TRUE(same(big, parts.big)) << x << " (row " << r << ", column " << c << "): big " << big;
        ASSERT_TRUE(same(small, parts.small)) << x << " (row " << r << ", column " << c << "): small " << small;
      }
    }
  }
}

// Layer k's W [fan_out, fan_in] at flat offset begin goes to 2 begin + 2 row fan_in + column (small) and fan_in
// further (big); a range that starts inside one layer's weights and ends inside another's writes exactly its weights.
TEST_F(Tf32SplitKernels, WeightsSplitFromAnyRangeIntoTheirLayersRowsAndNothingElse) {
  const MlpSpec model = custom_model({13, 21, 7, 2}, 0.0);
  const std::vector<DenseLayer> layers = model.layers();
  const std::size_t count = model.parameter_count();
  const std::vector<float> parameters = test_values(count + 9);
  std::vector<kernels::WeightSplitLayer> table;
  for (const DenseLayer& layer : layers)
    table.push_back({layer.weight_offset, layer.weight_offset + layer.weight_count(), layer.fan_in});
  CudaStream stream;
  DeviceBuffer<float> device_parameters(count);
  copy_to_device(device_parameters, std::vector<float>(parameters.begin() + 9, parameters.end()), stream.get());
  DeviceBuffer<kernels::WeightSplitLayer> device_table(table.size());
  copy_to_device(device_table, table, stream.get());
  DeviceBuffer<float> split(2 * count);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  kernels::fill(split.data(), split.size(), nan, stream.get());
  const std::size_t first = 100, last = layers[2].weight_offset + 5;  // from layer 0's row 7 into layer 2's first row
  ASSERT_LT(first, layers[1].weight_offset);
  kernels::WeightSplit destination{split.data(), device_table.data(), static_cast<int>(table.size()), first};
  kernels::split_weights(device_parameters.data() + first, last - first, destination, stream.get());
  const std::vector<float> got = copy_to_host(split, stream.get());
  std::vector<bool> written(got.size(), false);
  for (const DenseLayer& layer : layers) {
    const std::size_t end = layer.weight_offset + layer.weight_count();
    for (std::size_t e = std::max(first, layer.weight_offset); e < std::min(last, end); ++e) {
      const std::size_t within = e - layer.weight_offset, row = within / layer.fan_in, column = within % layer.fan_in;
      const std::size_t small = 2 * layer.weight_offset + 2 * row * layer.fan_in + column;
      const tf32::Split parts = tf32::split(parameters[9 + e]);
      EXPECT_TRUE(same(got[small], parts.small)) << "weight " << e;
      EXPECT_TRUE(same(got[small + layer.fan_in], parts.big)) << "weight " << e;
      written[small] = written[small + layer.fan_in] = true;
    }
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!written[i]) EXPECT_TRUE(std::isnan(got[i])) << "slot " << i << " of no weight in the range was written";
}

}  // namespace
}  // namespace mgpu
