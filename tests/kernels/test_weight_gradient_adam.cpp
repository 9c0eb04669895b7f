// Purpose: holds the fused weight-gradient + Adam kernels (weight_gradient_adam.cuh: each tile's batch in one block;
// weight_gradient_adam_split.cuh: split over a cluster) to a float64 update of the same floats, at the batch's chunk
// boundaries (32 samples), every split count (also more parts than the batch has chunks), odd widths and offsets
// (their 4-byte paths), several layers per launch and an accumulated gradient; and their determinism: the same bits on
// a second call, whichever layers a launch holds and whichever grid the unsplit kernel runs. Skips without a CUDA
// device; the split kernel without thread-block clusters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/weight_gradient_adam.cuh"
#include "kernels/weight_gradient_adam_split.cuh"
#include "model/mlp_spec.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "platform/gpu_devices.hpp"
#include "train/float64_comparison.hpp"

namespace mgpu {
namespace {

constexpr float kLearningRate = 1e-3f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-7f;
constexpr int kUpdateNumber = 3;  // Adam's corrections 1 - beta^3: neither 1 nor the first step's
// fp32 sums of up to a few hundred products against float64: a few 1e-7 relative; a missing or doubled part of the
// batch, a wrong row or a stale moment gives 1e-2 or more.
constexpr double kMomentTolerance = 1e-5;
// The parameters against the float64 update of the GPU's own moments: the kernels' approximate square root and
// division (adam_element.cuh) move the step by a relative 1e-7 or so, the step being ~1e-3 of the weight.
constexpr double kParameterTolerance = 1e-6;

using float64_comparison::normal_values;
using float64_comparison::relative_error;

// One update's inputs: every layer's X and dZ, and the flat parameters, moments and (accumulated) gradient sums.
struct Problem {
  MlpSpec model;
  int batch = 0;
  std::vector<std::vector<float>> inputs;            // [batch, fan_in] per layer
  std::vector<std::vector<float>> output_gradients;  // [batch, fan_out] per layer
  std::vector<float> parameters, first_moment, second_moment, earlier;

  Problem(const MlpSpec& spec, int samples) : model(spec), batch(samples) {
    const std::size_t count = model.parameter_count();
    std::uint64_t seed = 100 + static_cast<std::uint64_t>(samples);
    for (const DenseLayer& layer : model.layers()) {
      inputs.push_back(normal_values(std::size_t(batch) * layer.fan_in, 1.0f, ++seed));
      output_gradients.push_back(normal_values(std::size_t(batch) * layer.fan_out, 1.0f, ++seed));
    }
    parameters = normal_values(count, 0.1f, ++seed);
    // Moments of the size the update adds, so that a moment loaded wrong (or not at all) shows.
    first_moment = normal_values(count, 0.01f * std::sqrt(float(batch)), ++seed);
    second_moment = normal_values(count, 1e-3f * float(batch), ++seed);
    for (float& v : second_moment) v = std::fabs(v);
    earlier = normal_values(count, std::sqrt(float(batch)), ++seed);
  }

  // Every weight's and bias's gradient in float64: (earlier if accumulated + dZ^T X, or the batch sum of dZ) x scale.
  std::vector<double> gradients(bool accumulated, double scale) const {
    std::vector<double> g(parameters.size(), 0.0);
    const std::vector<DenseLayer> layers = model.layers();
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const DenseLayer& layer = layers[l];
      for (int o = 0; o < layer.fan_out; ++o) {
        double bias = 0.0;
        for (int i = 0; i < layer.fan_in; ++i) {
          double sum = 0.0;
          for (int b = 0; b < batch; ++b)
            sum += double(output_gradients[l][std::size_t(b) * layer.fan_out + o]) *
                   double(inputs[l][std::size_t(b) * layer.fan_in + i]);
          g[layer.weight_offset + std::size_t(o) * layer.fan_in + i] = sum;
        }
        for (int b = 0; b < batch; ++b) bias += output_gradients[l][std::size_t(b) * layer.fan_out + o];
        if (layer.hidden) g[layer.bias_offset + o] = bias;
      }
    }
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = ((accumulated ? double(earlier[i]) : 0.0) + g[i]) * scale;
    return g;
  }
};

// The problem on the GPU: its buffers, the kernels' layer table and the step's corrections.
struct DeviceProblem {
  CudaStream stream;
  std::vector<DeviceBuffer<float>> inputs, output_gradients;
  DeviceBuffer<float> parameters, first_moment, second_moment, gradients;
  DeviceBuffer<kernels::StepParams> params{1};
  std::vector<kernels::WeightGradientAdamLayer> layers;

  explicit DeviceProblem(const Problem& problem)
      : parameters(problem.parameters.size()),
        first_moment(problem.parameters.size()),
        second_moment(problem.parameters.size()),
        gradients(problem.parameters.size()) {
    const std::vector<DenseLayer> model_layers = problem.model.layers();
    for (std::size_t l = 0; l < model_layers.size(); ++l) {
      inputs.emplace_back(problem.inputs[l].size());
      output_gradients.emplace_back(problem.output_gradients[l].size());
      copy_to_device(inputs.back(), problem.inputs[l], stream.get());
      copy_to_device(output_gradients.back(), problem.output_gradients[l], stream.get());
      layers.push_back(
          kernels::weight_gradient_adam_layer(model_layers[l], inputs.back().data(), output_gradients.back().data()));
    }
    kernels::StepParams step;
    step.correction1 = static_cast<float>(1.0 - std::pow(double(kBeta1), kUpdateNumber));
    step.correction2 = static_cast<float>(1.0 - std::pow(double(kBeta2), kUpdateNumber));
    MGPU_CUDA_CHECK(cudaMemcpyAsync(params.data(), &step, sizeof step, cudaMemcpyHostToDevice, stream.get()));
  }

  // The state before an update: the problem's, and its earlier sum where accumulated, else NaN (a read shows).
  void reset(const Problem& problem, bool accumulated) {
    copy_to_device(parameters, problem.parameters, stream.get());
    copy_to_device(first_moment, problem.first_moment, stream.get());
    copy_to_device(second_moment, problem.second_moment, stream.get());
    copy_to_device(gradients,
                   accumulated ? problem.earlier
                               : std::vector<float>(problem.earlier.size(), std::numeric_limits<float>::quiet_NaN()),
                   stream.get());
  }

  // Layers [first, last) updated with `splits` parts (1: the unsplit kernel on `grid`).
  void update(std::size_t first, std::size_t last, int batch, int splits, bool accumulated, float scale,
              kernels::WeightGradientAdamGrid grid = kernels::WeightGradientAdamGrid::resident) {
    kernels::AdamConstants adam;
    adam.learning_rate = kLearningRate;
    adam.beta1 = kBeta1;
    adam.beta2 = kBeta2;
    adam.epsilon = kEpsilon;
    adam.gradient_scale = scale;
    if (splits == 1) {
      kernels::weight_gradient_adam(layers.data() + first, last - first, batch, parameters.data(), gradients.data(),
                                    first_moment.data(), second_moment.data(), adam, params.data(), accumulated, grid,
                                    stream.get());
    } else {
      kernels::weight_gradient_adam_split(layers.data() + first, last - first, batch, splits, parameters.data(),
                                          gradients.data(), first_moment.data(), second_moment.data(), adam,
                                          params.data(), accumulated, stream.get());
    }
  }

  struct State {
    std::vector<float> parameters, first_moment, second_moment;
    bool operator==(const State& other) const {
      return parameters == other.parameters && first_moment == other.first_moment &&
             second_moment == other.second_moment;
    }
  };
  State state() const {
    return {copy_to_host(parameters, stream.get()), copy_to_host(first_moment, stream.get()),
            copy_to_host(second_moment, stream.get())};
  }
};

// The GPU's state after an update against float64: both moments from the reference gradient, layer by layer, weights
// and biases apart; the parameters as the update of the GPU's own moments.
void expect_matches(const Problem& problem, const DeviceProblem::State& gpu, const std::vector<double>& gradients,
                    const std::string& what) {
  const std::size_t count = problem.parameters.size();
  std::vector<double> first(count), second(count), parameters(count);
  const double correction1 = 1.0 - std::pow(double(kBeta1), kUpdateNumber);
  const double correction2 = 1.0 - std::pow(double(kBeta2), kUpdateNumber);
  for (std::size_t i = 0; i < count; ++i) {
    first[i] = double(kBeta1) * problem.first_moment[i] + (1.0 - double(kBeta1)) * gradients[i];
    second[i] = double(kBeta2) * problem.second_moment[i] + (1.0 - double(kBeta2)) * gradients[i] * gradients[i];
    const double m_hat = double(gpu.first_moment[i]) / correction1;
    const double v_hat = double(gpu.second_moment[i]) / correction2;
    parameters[i] = double(problem.parameters[i]) - double(kLearningRate) * m_hat / (std::sqrt(v_hat) + kEpsilon);
  }
  for (const DenseLayer& layer : problem.model.layers()) {
    const auto check = [&](std::size_t offset, std::size_t size, const char* part) {
      const std::string where =
          what + ", " + part + " of " + std::to_string(layer.fan_in) + "->" + std::to_string(layer.fan_out);
      EXPECT_LE(relative_error(gpu.first_moment, first, offset, size), kMomentTolerance) << where << ": first moment";
      EXPECT_LE(relative_error(gpu.second_moment, second, offset, size), kMomentTolerance)
          << where << ": second moment";
      EXPECT_LE(relative_error(gpu.parameters, parameters, offset, size), kParameterTolerance) << where << ": weights";
    };
    check(layer.weight_offset, layer.weight_count(), "weights");
    if (layer.hidden) check(layer.bias_offset, layer.bias_count(), "biases");
  }
}

bool has_clusters() {
  int device = 0, major = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9;
}

class WeightGradientAdamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  }
  // The split counts to test here: 1, and with clusters 2, 4 and 8.
  static std::vector<int> split_counts() { return has_clusters() ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}; }
};

// Widths: medium's (847 columns: 4-byte copies of X and unaligned state past layer 0), odd ones (every tile ragged,
// offsets no multiple of 4), and aligned ones with tiles of whole rows.
std::vector<MlpSpec> models() {
  return {preset_model("medium"), custom_model({13, 21, 7, 2}, 0.0), custom_model({130, 67, 33}, 0.0),
          custom_model({64, 96, 32}, 0.0)};
}

TEST_F(WeightGradientAdamTest, EverySplitMatchesFloat64AtTheChunkBoundaries) {
  // Batches on both sides of one, two, four and eight chunks of 32: a last chunk of one sample, parts of unequal
  // length, and (8 parts of 33 samples) parts with nothing to sum.
  for (const MlpSpec& model : models()) {
    for (int batch : {1, 31, 32, 33, 64, 65, 128, 129, 257}) {
      const Problem problem(model, batch);
      DeviceProblem gpu(problem);
      const std::vector<double> gradients = problem.gradients(false, 1.0);
      for (int splits : split_counts()) {
        gpu.reset(problem, false);
        gpu.update(0, gpu.layers.size(), batch, splits, false, 1.0f);
        expect_matches(
            problem, gpu.state(), gradients,
            model.widths_string() + " batch " + std::to_string(batch) + ", " + std::to_string(splits) + " parts");
      }
    }
  }
}

TEST_F(WeightGradientAdamTest, AnAccumulatedSumIsAddedBeforeTheScale) {
  // The last step of --accumulate 2: the buffer's earlier sum plus this batch's, times 1/2. Small models, odd and
  // aligned (compute-sanitizer's racecheck runs this test: every kernel and path in seconds).
  for (const MlpSpec& model :
       {custom_model({13, 21, 7, 2}, 0.0), custom_model({130, 67, 33}, 0.0), custom_model({64, 96, 32}, 0.0)}) {
    const Problem problem(model, 129);
    DeviceProblem gpu(problem);
    const std::vector<double> gradients = problem.gradients(true, 0.5);
    for (int splits : split_counts()) {
      gpu.reset(problem, true);
      gpu.update(0, gpu.layers.size(), problem.batch, splits, true, 0.5f);
      expect_matches(problem, gpu.state(), gradients, model.widths_string() + ", " + std::to_string(splits) + " parts");
    }
  }
}

TEST_F(WeightGradientAdamTest, EachSplitGivesTheSameBitsCallAfterCallAndLayerByLayer) {
  // What the step relies on: a replay computes what the first call did, and the early updates (one layer per launch,
  // the unsplit kernel one tile per block) give the bits of one launch over every layer.
  const Problem problem(preset_model("medium"), 129);
  DeviceProblem gpu(problem);
  for (int splits : split_counts()) {
    gpu.reset(problem, false);
    gpu.update(0, gpu.layers.size(), problem.batch, splits, false, 1.0f);
    const DeviceProblem::State whole = gpu.state();
    gpu.reset(problem, false);
    gpu.update(0, gpu.layers.size(), problem.batch, splits, false, 1.0f);
    EXPECT_TRUE(gpu.state() == whole) << splits << " parts: a second call differs from the first";
    gpu.reset(problem, false);
    for (std::size_t l = gpu.layers.size(); l-- > 0;)
      gpu.update(l, l + 1, problem.batch, splits, false, 1.0f, kernels::WeightGradientAdamGrid::one_tile_per_block);
    EXPECT_TRUE(gpu.state() == whole) << splits << " parts: one layer per launch differs from one launch";
  }
}

TEST_F(WeightGradientAdamTest, SplitsAreOfferedWhereTilesAreFewerThanBlockSlots) {
  if (!has_clusters()) GTEST_SKIP() << "the device has no thread-block clusters: no split is offered there";
  const auto offered = [](const MlpSpec& model, int batch) {
    const Problem problem(model, batch);
    DeviceProblem gpu(problem);
    return kernels::weight_gradient_adam_split_counts(gpu.layers.data(), gpu.layers.size(), batch);
  };
  // medium: 133 tiles, under 3 blocks per SM on any GPU of 45 SMs or more; never more parts than chunks of 32.
  EXPECT_EQ(offered(preset_model("medium"), 32), std::vector<int>{});
  EXPECT_EQ(offered(preset_model("medium"), 33), std::vector<int>{2});
  EXPECT_EQ(offered(preset_model("medium"), 128), (std::vector<int>{2, 4}));
  EXPECT_EQ(offered(preset_model("medium"), 257), (std::vector<int>{2, 4, 8}));
  // 4 x 1024 x 1024 weights: 2,048 tiles, more than 3 per SM on any GPU of up to 682 SMs.
  EXPECT_EQ(offered(custom_model({1024, 1024, 1024, 1024, 1024}, 0.0), 128), std::vector<int>{});
}

TEST_F(WeightGradientAdamTest, OtherSplitCountsAreRefused) {
  const Problem problem(custom_model({13, 21, 7, 2}, 0.0), 64);
  DeviceProblem gpu(problem);
  for (int splits : {0, 3, 16}) EXPECT_THROW(gpu.update(0, 1, problem.batch, splits, false, 1.0f), Error) << splits;
}

}  // namespace
}  // namespace mgpu
