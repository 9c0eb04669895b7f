// Purpose: holds the synthetic batch (generate_batch, src/kernels/cuda_kernels.cu) to the host's functions of
// src/model/synthetic_data.hpp: every feature and target written, features within a few ulp of the host's (the
// device's logf and cosf may round differently from the host library's), targets to the float64 projection of the
// device's own features; and to the data's defining property, that a sample depends only on (seed, index): any batch
// holding a sample gives it the same bits, whatever the count, first sample or number of samples (past the grid's
// 65535 rows too). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "model/synthetic_data.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

constexpr std::uint64_t kSeed = 23;

struct Batch {
  std::vector<float> x;
  std::vector<float> targets;
};

class GenerateBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
    }
  }

  // Samples first_sample .. + count - 1 of kSeed, every output poisoned with NaN first.
  Batch generate(std::uint64_t first_sample, int count, int inputs, int outputs) {
    CudaStream stream;
    DeviceBuffer<float> x(static_cast<std::size_t>(count) * inputs);
    DeviceBuffer<float> targets(static_cast<std::size_t>(count) * outputs);
    DeviceBuffer<float> teacher(static_cast<std::size_t>(outputs) * inputs);
    DeviceBuffer<kernels::StepParams> params(1);
    kernels::StepParams host;
    host.seed = kSeed;
    host.first_sample = first_sample;
    MGPU_CUDA_CHECK(cudaMemcpyAsync(params.data(), &host, sizeof host, cudaMemcpyHostToDevice, stream.get()));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    kernels::fill(x.data(), x.size(), nan, stream.get());
    kernels::fill(targets.data(), targets.size(), nan, stream.get());
    kernels::teacher_weights(teacher.data(), kSeed, outputs, inputs, stream.get());
    kernels::generate_batch(x.data(), targets.data(), teacher.data(), params.data(), count, inputs, outputs,
                            stream.get());
    return {copy_to_host(x, stream.get()), copy_to_host(targets, stream.get())};
  }
};

TEST_F(GenerateBatchTest, MatchesTheHostFunctions) {
  struct Case {
    int count, inputs, outputs;
  };
  for (const Case c :
       {Case{1, 1, 1}, Case{3, 50, 3}, Case{8, 847, 3}, Case{33, 1023, 2}, Case{32, 1025, 5}, Case{130, 4800, 3}}) {
    const std::string name =
        std::to_string(c.count) + " x " + std::to_string(c.inputs) + " -> " + std::to_string(c.outputs);
    const std::uint64_t first_sample = 1000003;
    const Batch batch = generate(first_sample, c.count, c.inputs, c.outputs);
    int wrong_features = 0;
    int wrong_targets = 0;
    for (int i = 0; i < c.count; ++i) {
      for (int j = 0; j < c.inputs; ++j) {
        const float device = batch.x[static_cast<std::size_t>(i) * c.inputs + j];
        const float host = synthetic::feature(kSeed, first_sample + i, static_cast<std::uint32_t>(j));
        if (!(std::fabs(device - host) <= 1e-5f * std::fmax(1.0f, std::fabs(host)))) ++wrong_features;
      }
      for (int k = 0; k < c.outputs; ++k) {
        double projection = 0.0;
        double magnitude = 0.0;
        for (int j = 0; j < c.inputs; ++j) {
          const double term = static_cast<double>(synthetic::teacher_weight(kSeed, k, j)) *
                              batch.x[static_cast<std::size_t>(i) * c.inputs + j];
          projection += term;
          magnitude += std::fabs(term);
        }
        const double expected = std::tanh(projection / std::sqrt(static_cast<double>(c.inputs)));
        // fp32 sum of `inputs` terms, then tanh (slope at most 1) of the scaled sum, and tanhf's few ulp.
        const double bound = 2.0 * (c.inputs + 1) * std::ldexp(1.0, -24) * magnitude / std::sqrt(c.inputs) + 1e-6;
        if (!(std::fabs(batch.targets[static_cast<std::size_t>(i) * c.outputs + k] - expected) <= bound))
          ++wrong_targets;
      }
    }
    EXPECT_EQ(wrong_features, 0) << name;
    EXPECT_EQ(wrong_targets, 0) << name;
  }
}

TEST_F(GenerateBatchTest, ASampleIsAFunctionOfSeedAndIndexAlone) {
  for (const int inputs : {5, 847, 4800}) {
    const int outputs = 3;
    const int count = inputs == 5 ? 70000 : 64;  // past 65535 rows of the grid, where it has few inputs
    const Batch whole = generate(500, count, inputs, outputs);
    const int offset = count / 3 + 1;
    const int part_count = count / 2 - 1;
    const Batch part = generate(500 + offset, part_count, inputs, outputs);
    EXPECT_EQ(std::memcmp(part.x.data(), whole.x.data() + static_cast<std::size_t>(offset) * inputs,
                          part.x.size() * sizeof(float)),
              0)
        << inputs << " inputs: features";
    EXPECT_EQ(std::memcmp(part.targets.data(), whole.targets.data() + static_cast<std::size_t>(offset) * outputs,
                          part.targets.size() * sizeof(float)),
              0)
        << inputs << " inputs: targets";
    int unwritten = 0;
    for (const float value : whole.x) unwritten += std::isnan(value) ? 1 : 0;
    for (const float value : whole.targets) unwritten += std::isnan(value) ? 1 : 0;
    EXPECT_EQ(unwritten, 0) << inputs << " inputs";
  }
}

}  // namespace
}  // namespace mgpu
