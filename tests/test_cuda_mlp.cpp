// Purpose: holds CudaMlp (batch generation, initialisation, forward, loss, gradients, Adam) to the CPU templates of
// cpu_mlp.hpp evaluated in float64 on the same float inputs. Skips without a visible CUDA device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu_mlp.hpp"
#include "cuda_mlp.hpp"
#include "cuda_resources.hpp"
#include "gpu_devices.hpp"

namespace mgpu {
namespace {

// fp32 against float64 with fp32 accumulation (no TF32): errors of a few 1e-7 relative are expected.
constexpr double kMathTolerance = 1e-4;
constexpr double kDataTolerance = 1e-5;  // libm vs CUDA logf/cosf in the Box-Muller features
constexpr double kInitTolerance = 1e-6;

#define MGPU_SKIP_WITHOUT_CUDA_DEVICE()                                                                         \
  do {                                                                                                          \
    if (visible_cuda_device_count() == 0)                                                                       \
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine"; \
  } while (0)

std::vector<double> to_double(const std::vector<float>& values) { return {values.begin(), values.end()}; }

// ||gpu - reference|| / ||reference|| over [first, first + count); infinity if the GPU wrote a non-finite value
// (the NaN poison of an element it never wrote).
double relative_error(const std::vector<float>& gpu, const std::vector<double>& reference, std::size_t first = 0,
                      std::size_t count = std::numeric_limits<std::size_t>::max()) {
  const std::size_t end = count == std::numeric_limits<std::size_t>::max() ? reference.size() : first + count;
  EXPECT_EQ(gpu.size(), reference.size());
  double difference = 0.0;
  double norm = 0.0;
  for (std::size_t i = first; i < end && i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) return std::numeric_limits<double>::infinity();
    difference += (gpu[i] - reference[i]) * (gpu[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm > 0.0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

std::vector<float> normal_values(std::size_t count, float scale, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(count);
  for (float& value : values) value = normal(generator);
  return values;
}

// Glorot weights as the trainer starts from, with random (non-zero) biases so the bias path is exercised.
std::vector<float> random_parameters(const MlpSpec& model, std::uint64_t seed) {
  std::vector<float> parameters(model.parameter_count());
  cpu::initialize_parameters(model, seed, 0, parameters.data());
  const std::vector<float> noise = normal_values(parameters.size(), 0.1f, seed + 1);
  for (const DenseLayer& layer : model.layers()) {
    for (std::size_t i = 0; i < layer.bias_count(); ++i)
      parameters[layer.bias_offset + i] = noise[layer.bias_offset + i];
  }
  return parameters;
}

struct ModelCase {
  std::string name;
  MlpSpec model;
  int batch;
};

// Odd widths and batch take the kernels' scalar (non-float4) paths; the preset is what the benchmark runs.
std::vector<ModelCase> model_cases() {
  return {{"small", custom_model({37, 64, 48, 5}, 0.0), 24},
          {"odd", custom_model({13, 21, 7, 2}, 0.0), 19},
          {"medium", preset_model("medium"), 32},
          {"large", preset_model("large"), 32}};
}

// One GPU model on its own stream, with random inputs and parameters uploaded and every output poisoned.
struct GpuFixture {
  CudaStream stream;
  CudaMlp mlp;
  std::vector<float> parameters;
  std::vector<float> inputs;
  std::vector<float> targets;

  explicit GpuFixture(const ModelCase& c)
      : mlp(c.model, c.batch, stream.get()),
        parameters(random_parameters(c.model, 11)),
        inputs(normal_values(std::size_t(c.batch) * c.model.input_width(), 1.0f, 12)),
        targets(normal_values(std::size_t(c.batch) * c.model.output_width(), 0.5f, 13)) {
    mlp.upload_parameters(parameters);
    mlp.upload_batch(inputs, targets);
    mlp.fill_work_buffers_with_nan();
  }
};

cpu::DropoutKey dropout_key(float drop_probability) {
  cpu::DropoutKey key;
  key.seed = 5;
  key.run = 2;
  key.step = 9;
  key.first_sample = 1234567;
  key.drop_probability = drop_probability;
  return key;
}

// The float64 reference on the same (float) inputs.
struct Reference {
  cpu::MlpActivations<double> activations;
  std::vector<double> grad_output;
  std::vector<double> gradients;
  double loss = 0.0;

  Reference(const ModelCase& c, const GpuFixture& gpu, const cpu::DropoutKey& key) {
    const std::vector<double> parameters = to_double(gpu.parameters);
    const std::vector<double> inputs = to_double(gpu.inputs);
    const std::vector<double> targets = to_double(gpu.targets);
    cpu::mlp_forward(c.model, parameters.data(), inputs.data(), c.batch, key, activations);
    grad_output.resize(activations.output.size());
    loss = cpu::mse_loss_and_gradient(activations.output.data(), targets.data(), activations.output.size(),
                                      grad_output.data());
    gradients.assign(parameters.size(), 0.0);
    cpu::mlp_backward(c.model, parameters.data(), inputs.data(), c.batch, activations, grad_output.data(),
                      key.drop_probability, gradients.data());
  }
};

class CudaMlpTest : public ::testing::Test {
 protected:
  void SetUp() override { MGPU_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_F(CudaMlpTest, InitializationMatchesCpu) {
  for (const ModelCase& c : model_cases()) {
    CudaStream stream;
    CudaMlp mlp(c.model, c.batch, stream.get());
    mlp.upload_parameters(std::vector<float>(c.model.parameter_count(), std::numeric_limits<float>::quiet_NaN()));
    mlp.initialize(21, 4);
    std::vector<float> reference(c.model.parameter_count());
    cpu::initialize_parameters(c.model, 21, 4, reference.data());
    const double error = relative_error(mlp.download_parameters(), to_double(reference));
    EXPECT_LE(error, kInitTolerance) << c.name;
  }
}

TEST_F(CudaMlpTest, BatchGenerationMatchesCpu) {
  for (const ModelCase& c : model_cases()) {
    CudaStream stream;
    CudaMlp mlp(c.model, c.batch, stream.get());
    const std::vector<float> nan_inputs(std::size_t(c.batch) * c.model.input_width(),
                                        std::numeric_limits<float>::quiet_NaN());
    const std::vector<float> nan_targets(std::size_t(c.batch) * c.model.output_width(),
                                         std::numeric_limits<float>::quiet_NaN());
    mlp.upload_batch(nan_inputs, nan_targets);
    const std::uint64_t seed = 17;
    const std::uint64_t first_sample = 1000003;
    mlp.generate_batch(seed, first_sample);
    std::vector<float> inputs(nan_inputs.size());
    std::vector<float> targets(nan_targets.size());
    cpu::generate_samples(seed, first_sample, c.batch, c.model.input_width(), c.model.output_width(), inputs.data(),
                          targets.data());
    EXPECT_LE(relative_error(mlp.download_inputs(), to_double(inputs)), kDataTolerance) << c.name;
    EXPECT_LE(relative_error(mlp.download_targets(), to_double(targets)), kDataTolerance) << c.name;
  }
}

TEST_F(CudaMlpTest, AdamMatchesFloat64Reference) {
  // Given gradients (not computed ones), so the comparison is of the update rule alone: Adam's m/sqrt(v) would
  // turn a sign difference of a near-zero computed gradient into a full learning-rate step.
  AdamSettings adam;
  for (const ModelCase& c : model_cases()) {
    GpuFixture gpu(c);
    gpu.mlp.initialize(3, 1);  // zero moments
    gpu.mlp.upload_parameters(gpu.parameters);
    std::vector<double> parameters = to_double(gpu.parameters);
    std::vector<double> first_moment(parameters.size(), 0.0);
    std::vector<double> second_moment(parameters.size(), 0.0);
    for (int step = 1; step <= 5; ++step) {
      const std::vector<float> gradients = normal_values(parameters.size(), 1e-2f, 100 + step);
      gpu.mlp.upload_gradients(gradients);
      gpu.mlp.adam(adam, step);
      cpu::adam_update(adam, step, parameters.size(), parameters.data(), to_double(gradients).data(),
                       first_moment.data(), second_moment.data());
    }
    // Compare the updates (parameters after - before): comparing the parameters themselves would hide them.
    const std::vector<float> after = gpu.mlp.download_parameters();
    std::vector<float> gpu_update(after.size());
    std::vector<double> reference_update(after.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
      gpu_update[i] = static_cast<float>(double(after[i]) - double(gpu.parameters[i]));
      reference_update[i] = parameters[i] - double(gpu.parameters[i]);
    }
    EXPECT_LE(relative_error(gpu_update, reference_update), kMathTolerance) << c.name;
  }
}

struct ReferenceCase {
  ModelCase model;
  float drop_probability;
};

class CudaMlpReference : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  void SetUp() override { MGPU_SKIP_WITHOUT_CUDA_DEVICE(); }
};

TEST_P(CudaMlpReference, ForwardMatchesFloat64Reference) {
  const ReferenceCase& rc = GetParam();
  GpuFixture gpu(rc.model);
  const cpu::DropoutKey key = dropout_key(rc.drop_probability);
  gpu.mlp.forward(key);
  const Reference reference(rc.model, gpu, key);
  const double error = relative_error(gpu.mlp.download_output(), reference.activations.output);
  EXPECT_LE(error, kMathTolerance);
}

TEST_P(CudaMlpReference, LossAndGradientsMatchFloat64Reference) {
  const ReferenceCase& rc = GetParam();
  GpuFixture gpu(rc.model);
  const cpu::DropoutKey key = dropout_key(rc.drop_probability);
  DeviceBuffer<float> loss(1);
  copy_to_device(loss, std::vector<float>{std::numeric_limits<float>::quiet_NaN()}, gpu.stream.get());
  gpu.mlp.forward(key);
  gpu.mlp.loss_and_gradient(loss.data());
  gpu.mlp.backward();
  const Reference reference(rc.model, gpu, key);

  const float gpu_loss = copy_to_host(loss, gpu.stream.get()).front();
  ASSERT_TRUE(std::isfinite(gpu_loss));
  EXPECT_LE(std::abs(gpu_loss - reference.loss) / reference.loss, kMathTolerance);

  // Layer by layer, weights and biases apart: a norm over everything would let a small wrong block through.
  const std::vector<float> gradients = gpu.mlp.download_gradients();
  for (const DenseLayer& layer : rc.model.model.layers()) {
    EXPECT_LE(relative_error(gradients, reference.gradients, layer.weight_offset, layer.weight_count()), kMathTolerance)
        << "weights " << layer.fan_in << "->" << layer.fan_out;
    if (layer.hidden) {
      EXPECT_LE(relative_error(gradients, reference.gradients, layer.bias_offset, layer.bias_count()), kMathTolerance)
          << "biases " << layer.fan_out;
    }
  }
}

std::vector<ReferenceCase> reference_cases() {
  std::vector<ReferenceCase> cases;
  for (const ModelCase& model : model_cases()) {
    cases.push_back({model, 0.0f});
    cases.push_back({model, 0.3f});
  }
  return cases;
}

std::string reference_case_name(const ::testing::TestParamInfo<ReferenceCase>& info) {
  return info.param.model.name + (info.param.drop_probability > 0.0f ? "_dropout" : "_no_dropout");
}

// "Cuda" prefix so that --gtest_filter='Cuda*' selects these too.
INSTANTIATE_TEST_SUITE_P(Cuda, CudaMlpReference, ::testing::ValuesIn(reference_cases()), reference_case_name);

}  // namespace
}  // namespace mgpu
