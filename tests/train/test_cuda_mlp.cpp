// Purpose: holds CudaMlp (batch generation, initialisation, forward, loss, gradients, Adam) to the CPU templates of
// cpu_mlp.hpp evaluated in float64 on the same float inputs. Skips without a visible CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_mlp_host_driver.hpp"
#include "float64_comparison.hpp"
#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "train/cpu_mlp.hpp"
#include "train/cuda_mlp.hpp"

namespace mgpu {
namespace {

// fp32 against float64 with fp32 accumulation (no TF32): errors of a few 1e-7 relative are expected.
constexpr double kMathTolerance = 1e-4;
// TF32 rounds GEMM inputs to a 10-bit mantissa (relative 2^-11 ~ 4.9e-4 per operand) and accumulates in fp32: the
// output stays within 1e-2 of float64. Gradients differ more, because a pre-activation within rounding of zero
// takes the other side of the ReLU and passes (or blocks) a whole gradient term: measured on H200 up to 5.5e-2
// (medium with dropout, first layer's weights). So gradients are held to 1e-1: a wrong GEMM gives O(1).
constexpr double kTf32Tolerance = 1e-2;
constexpr double kTf32GradientTolerance = 1e-1;
// bf16 keeps 8 significant bits (unit roundoff 2^-9 ~ 2.0e-3, four times TF32's 2^-11): weights, inputs, activations
// and activation gradients are rounded before each GEMM, products are accumulated in fp32. Scaling the TF32 bounds by
// the 4x larger roundoff: the output within 4e-2 of float64, the gradients (ReLU sides flipping near zero, as above)
// within 4e-1. A wrong GEMM (operand type, layout, missing cast) gives O(1): NaN-poisoned copies show as infinity.
constexpr double kBf16Tolerance = 4e-2;
constexpr double kBf16GradientTolerance = 4e-1;
constexpr double kBf16Rounding = 1.0 / 256;  // |bf16(x) - x| <= 2^-9 |x| elementwise, so also norm-wise (with margin)
constexpr double kDataTolerance = 1e-5;      // libm vs CUDA logf/cosf in the Box-Muller features
constexpr double kInitTolerance = 1e-6;

#define MGPU_SKIP_WITHOUT_CUDA_DEVICE()                                                                         \
  do {                                                                                                          \
    if (visible_cuda_device_count() == 0)                                                                       \
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine"; \
  } while (0)

std::vector<double> to_double(const std::vector<float>& values) { return {values.begin(), values.end()}; }

using float64_comparison::normal_values;
using float64_comparison::relative_error;

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

// Odd widths and batch take the kernels' scalar (non-float4) paths; the presets are what the benchmark runs; batches
// of 128 and 129 take the GEMMs of more than 64 columns and the fused optimizer's splits over 4 and 5 chunks. "tall"
// gives the fused optimizer what the presets at batch 32 do not: a batch of three chunks (the last partial) and, in its
// first layer (aligned rows, ragged last tiles), more tiles than one resident block each, so blocks walk several;
// updated alone (the early-updates test), that layer takes the kernel's instance for one aligned layer over several
// chunks, held to the bits of the general instance.
std::vector<ModelCase> model_cases() {
  return {{"small", custom_model({37, 64, 48, 5}, 0.0), 24},
          {"odd", custom_model({13, 21, 7, 2}, 0.0), 19},
          {"tall", custom_model({1100, 1032, 5}, 0.0), 70},
          {"medium", preset_model("medium"), 32},
          {"large", preset_model("large"), 32},
          {"medium_b128", preset_model("medium"), 128},
          {"odd_b129", custom_model({13, 21, 7, 2}, 0.0), 129}};
}

// One GPU model on its own stream, with random inputs and parameters uploaded and every output poisoned.
struct GpuFixture {
  CudaStream stream;
  CudaMlp mlp;
  CudaMlpHostDriver host{mlp};  // the step's values from the host
  std::vector<float> parameters;
  std::vector<float> inputs;
  std::vector<float> targets;

  explicit GpuFixture(const ModelCase& c, Precision precision = Precision::fp32)
      : mlp(c.model, c.batch, stream.get(), precision),
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

// What the GEMMs write starts as NaN (a read before any write shows in the loss), whatever cudaMalloc handed back.
TEST_F(CudaMlpTest, WorkBuffersStartAsNan) {
  for (const ModelCase& c : model_cases()) {
    CudaStream stream;
    CudaMlp mlp(c.model, c.batch, stream.get());
    const auto all_nan = [](const std::vector<float>& values) {
      return !values.empty() && std::all_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
    };
    EXPECT_TRUE(all_nan(mlp.download_output())) << c.name;
    EXPECT_TRUE(all_nan(mlp.download_gradients())) << c.name;
    for (int l = 0; l < static_cast<int>(c.model.layers().size()); ++l)
      EXPECT_TRUE(all_nan(mlp.download_output_gradient(l))) << c.name << " layer " << l;
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
    CudaMlpHostDriver(mlp).generate_batch(seed, first_sample);
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
      gpu.host.adam_at_step(adam, step);
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

// With bf16 Adam updates the fp32 master weights exactly as with fp32, and writes their bf16 rounding in the same pass.
TEST_F(CudaMlpTest, Bf16AdamKeepsFp32MasterAndWritesTheBf16Copy) {
  const ModelCase c = model_cases()[2];
  GpuFixture fp32(c);
  GpuFixture bf16(c, Precision::bf16);
  const AdamSettings adam;
  const std::vector<float> gradients = normal_values(c.model.parameter_count(), 0.01f, 21);
  for (GpuFixture* gpu : {&fp32, &bf16}) {
    gpu->mlp.upload_gradients(gradients);
    gpu->host.adam_at_step(adam, 1);
  }
  const std::vector<float> master = bf16.mlp.download_parameters();
  EXPECT_EQ(master, fp32.mlp.download_parameters());
  const std::vector<float> copy = bf16.mlp.download_bf16_parameters();
  EXPECT_LE(relative_error(copy, to_double(master)), kBf16Rounding);
  EXPECT_GT(relative_error(copy, to_double(master)), 0.0);  // it is a rounding, not the fp32 values
}

TEST_F(CudaMlpTest, AdamOverBucketRangesEqualsOneAdamBitForBit) {
  // Per-bucket updates (overlap) must be exactly the whole-buffer update: element-wise, only the ranges differ,
  // including ranges that start off a 16-byte boundary (the scalar path).
  AdamSettings adam;
  for (const ModelCase& c : model_cases()) {
    const std::vector<float> gradients = normal_values(c.model.parameter_count(), 1e-2f, 7);
    GpuFixture whole(c);
    whole.mlp.initialize(3, 1);
    whole.mlp.upload_parameters(whole.parameters);
    whole.mlp.upload_gradients(gradients);
    whole.host.adam_at_step(adam, 1);
    GpuFixture pieces(c);
    pieces.mlp.initialize(3, 1);
    pieces.mlp.upload_parameters(pieces.parameters);
    pieces.mlp.upload_gradients(gradients);
    pieces.host.adam_at_step(adam, 1);  // sets the step-1 corrections; then undo it with fresh state and redo per range
    pieces.mlp.initialize(3, 1);
    pieces.mlp.upload_parameters(pieces.parameters);
    const BucketPlan plan = overlap_plan(c.model, 4 * 37, 4 * 11);
    for (const GradientBucket& bucket : plan.buckets) pieces.mlp.adam(adam, bucket.begin, bucket.end - bucket.begin);
    EXPECT_EQ(pieces.mlp.download_parameters(), whole.mlp.download_parameters()) << c.name;
  }
}

TEST_F(CudaMlpTest, StepCounterDrivesBatchAndLossSlot) {
  // What a graph replay relies on: initialize resets the device step counter, each advance_step moves it on, and
  // the batch and the loss slot follow it without any host-side argument.
  const ModelCase c = model_cases().front();
  CudaStream stream;
  CudaMlp mlp(c.model, c.batch, stream.get());
  const std::uint64_t seed = 29;
  const int global_batch = 3 * c.batch;
  const std::uint64_t rank_offset = c.batch;  // rank 1 of 3
  mlp.initialize(seed, 5);
  DeviceBuffer<float> losses(4);
  copy_to_device(losses, std::vector<float>(4, std::numeric_limits<float>::quiet_NaN()), stream.get());
  AdamSettings adam;
  for (int step = 0; step < 3; ++step) {
    mlp.advance_step(global_batch, rank_offset, adam);
    mlp.generate_batch();
    mlp.forward();
    mlp.loss_and_gradient(loss_slots(losses));
  }
  std::vector<float> inputs(std::size_t(c.batch) * c.model.input_width());
  std::vector<float> targets(std::size_t(c.batch) * c.model.output_width());
  cpu::generate_samples(seed, 2 * global_batch + rank_offset, c.batch, c.model.input_width(), c.model.output_width(),
                        inputs.data(), targets.data());
  EXPECT_LE(relative_error(mlp.download_inputs(), to_double(inputs)), kDataTolerance);
  const std::vector<float> written = copy_to_host(losses, stream.get());
  for (int step = 0; step < 3; ++step) EXPECT_TRUE(std::isfinite(written[step]) && written[step] > 0) << step;
  EXPECT_TRUE(std::isnan(written[3]));  // no fourth step
  // A step counted beyond the slots writes no loss, whichever kernel computes it (set-up replays the step more often
  // than a run has steps): slots 2 and 3 of the array stay as they were.
  mlp.initialize(seed, 5);
  copy_to_device(losses, std::vector<float>(4, std::numeric_limits<float>::quiet_NaN()), stream.get());
  for (int step = 0; step < 4; ++step) {
    mlp.advance_step(global_batch, rank_offset, adam);
    mlp.generate_batch();
    mlp.forward();
    mlp.loss_and_gradient(kernels::LossSlots{losses.data(), 2});
  }
  const std::vector<float> bounded = copy_to_host(losses, stream.get());
  EXPECT_EQ(bounded[0], written[0]);
  EXPECT_EQ(bounded[1], written[1]);
  EXPECT_TRUE(std::isnan(bounded[2]) && std::isnan(bounded[3])) << bounded[2] << " " << bounded[3];
  // A new run starts again at step 0 and so at sample rank_offset.
  mlp.initialize(seed, 6);
  mlp.advance_step(global_batch, rank_offset, adam);
  mlp.generate_batch();
  cpu::generate_samples(seed, rank_offset, c.batch, c.model.input_width(), c.model.output_width(), inputs.data(),
                        targets.data());
  EXPECT_LE(relative_error(mlp.download_inputs(), to_double(inputs)), kDataTolerance);
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
  gpu.host.forward(key);
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
  gpu.host.forward(key);
  gpu.mlp.loss_and_gradient(loss_slots(loss));
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

// The gradients of one backward, computed per plan piece (as overlap runs them) and compared layer by layer.
void expect_gradients_match(const ModelCase& c, const std::vector<float>& gradients, const Reference& reference,
                            double tolerance, const std::string& what) {
  for (const DenseLayer& layer : c.model.layers()) {
    EXPECT_LE(relative_error(gradients, reference.gradients, layer.weight_offset, layer.weight_count()), tolerance)
        << what << ": weights " << layer.fan_in << "->" << layer.fan_out;
    if (layer.hidden) {
      EXPECT_LE(relative_error(gradients, reference.gradients, layer.bias_offset, layer.bias_count()), tolerance)
          << what << ": biases " << layer.fan_out;
    }
  }
}

// Caps of a few rows: every layer's weight gradient is cut into several GEMMs, as overlap does it; in both orders
// (deferred: every weight gradient after the chain of input gradients, first layer first).
void expect_backward_in_pieces_matches(const ReferenceCase& rc, Precision precision, double tolerance) {
  const std::size_t cap = std::size_t(4) * rc.model.model.max_width() * 3;
  for (const BucketPlan& plan :
       {overlap_plan(rc.model.model, cap, cap / 2), deferred_overlap_plan(rc.model.model, cap, cap / 2)}) {
    const std::string order = std::string(setting_name(precision)) + " " + setting_name(plan.order);
    GpuFixture gpu(rc.model, precision);
    gpu.mlp.fill_work_buffers_with_nan();  // a piece that is never written shows as NaN
    const cpu::DropoutKey key = dropout_key(rc.drop_probability);
    DeviceBuffer<float> loss(1);
    gpu.host.forward(key);
    gpu.mlp.loss_and_gradient(loss_slots(loss));
    std::vector<int> pieces_seen;
    gpu.mlp.backward(plan, [&](int piece) { pieces_seen.push_back(piece); });
    ASSERT_EQ(pieces_seen.size(), plan.pieces.size()) << order;
    for (std::size_t p = 0; p < pieces_seen.size(); ++p) EXPECT_EQ(pieces_seen[p], static_cast<int>(p)) << order;
    const Reference reference(rc.model, gpu, key);
    expect_gradients_match(rc.model, gpu.mlp.download_gradients(), reference, tolerance, "pieces, " + order);
  }
}

TEST_P(CudaMlpReference, BackwardInBucketPiecesMatchesFloat64Reference) {
  expect_backward_in_pieces_matches(GetParam(), Precision::fp32, kMathTolerance);
}

// After a fused update (adam_with_weight_gradients, update 1, from zero moments) of `gpu` from its fixture's state,
// with `earlier` (non-null) the accumulated sum the gradient buffer held: the moments against the float64 reference's
// gradients, layer by layer, weights and biases apart, and the parameters the update of those moments. (Why the
// moments: see FusedWeightGradientAdamMatchesFloat64Reference.)
void expect_first_fused_update_matches(const ModelCase& c, const GpuFixture& gpu, const Reference& reference,
                                       const std::vector<float>* earlier, double scale, const AdamSettings& adam,
                                       const std::string& what) {
  const std::size_t count = gpu.parameters.size();
  const std::vector<float> after = gpu.mlp.download_parameters();
  const auto [first_moment, second_moment] = gpu.mlp.download_moments();
  std::vector<double> reference_first(count), reference_second(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double gradient = ((earlier != nullptr ? double((*earlier)[i]) : 0.0) + reference.gradients[i]) * scale;
    reference_first[i] = (1.0 - adam.beta1) * gradient;
    reference_second[i] = (1.0 - adam.beta2) * gradient * gradient;
  }
  for (const DenseLayer& layer : c.model.layers()) {
    const auto check = [&](std::size_t offset, std::size_t size, const char* part) {
      EXPECT_LE(relative_error(first_moment, reference_first, offset, size), kMathTolerance)
          << what << ": first moment of the " << part << " " << layer.fan_in << "->" << layer.fan_out;
      EXPECT_LE(relative_error(second_moment, reference_second, offset, size), 2 * kMathTolerance)
          << what << ": second moment of the " << part << " " << layer.fan_in << "->" << layer.fan_out;
    };
    check(layer.weight_offset, layer.weight_count(), "weights");
    if (layer.hidden) check(layer.bias_offset, layer.bias_count(), "biases");
  }
  // Step 1: the corrections are 1 - beta1 and 1 - beta2.
  std::vector<double> expected(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double m_hat = double(first_moment[i]) / (1.0 - double(adam.beta1));
    const double v_hat = double(second_moment[i]) / (1.0 - double(adam.beta2));
    expected[i] = double(gpu.parameters[i]) - double(adam.learning_rate) * m_hat / (std::sqrt(v_hat) + adam.epsilon);
  }
  EXPECT_LE(relative_error(after, expected), 1e-6) << what << ": parameters are not the update of the moments";
}

// (split count, accumulated) pairs: the tuner's choice (0) with and without an accumulated sum, then every split count
// the device runs (2, 4 and 8 need thread-block clusters) without.
std::vector<std::pair<int, bool>> fused_update_variants() {
  std::vector<std::pair<int, bool>> variants = {{0, false}, {0, true}, {1, false}};
  int device = 0, major = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major >= 9)
    for (int splits : {2, 4, 8}) variants.emplace_back(splits, false);
  return variants;
}

// The fused optimizer (--fuse-optimizer): backward without the weight gradients, then one kernel that forms every
// weight gradient and applies Adam to it. From zero moments Adam's first step writes m = 0.1 g and v = 0.001 g^2, each
// within an ulp or two of the gradient the kernel formed, so the moments are held to the float64 reference's layer by
// layer, weights and biases apart. (The parameter update itself, lr * g / |g| here, would hide the gradient.) The
// parameters must then be the update of those moments (adam_element, tested above), recomputed here in float64. The
// gradient buffer starts as NaN, so a weight gradient read without being written shows; with `accumulated` it holds
// an earlier sum that is added, and the mean of two is taken (the last step of --accumulate 2).
// Each way of splitting the batch (CudaMlp::set_fused_update_splits: 1, 2, 4 or 8 parts; 0: the tuner's choice) is held
// to the same reference.
TEST_P(CudaMlpReference, FusedWeightGradientAdamMatchesFloat64Reference) {
  const ReferenceCase& rc = GetParam();
  const AdamSettings adam;
  for (const auto& [splits, accumulated] : fused_update_variants()) {
    GpuFixture gpu(rc.model);
    if (splits > 0) gpu.mlp.set_fused_update_splits(splits);
    const std::size_t count = gpu.parameters.size();
    gpu.host.upload_moments(std::vector<float>(count, 0.0f), std::vector<float>(count, 0.0f));
    const std::vector<float> earlier = normal_values(count, 1e-2f, 21);
    if (accumulated) gpu.mlp.upload_gradients(earlier);
    const cpu::DropoutKey key = dropout_key(rc.drop_probability);
    DeviceBuffer<float> loss(1);
    gpu.host.forward(key);
    gpu.mlp.loss_and_gradient(loss_slots(loss));
    gpu.mlp.backward_without_weight_gradients();
    const double scale = accumulated ? 0.5 : 1.0;
    gpu.host.adam_with_weight_gradients_at_step(adam, 1, static_cast<float>(scale), accumulated);
    expect_first_fused_update_matches(
        rc.model, gpu, Reference(rc.model, gpu, key), accumulated ? &earlier : nullptr, scale, adam,
        (accumulated ? "accumulated, " : "one step, ") + std::to_string(splits) + " parts");
  }
}

// Updating every layer above the first during backward, on a stream of its own (CudaMlp::EarlyUpdate), runs the same
// kernels on the same inputs as updating all of them afterwards: the same bits, with and without an accumulated sum.
// With `output_head`, forward and loss are forward_with_output_head (whose backward starts a layer lower).
void expect_early_updates_give_the_same_bits(const ReferenceCase& rc, bool output_head) {
  const AdamSettings adam;
  for (bool accumulated : {false, true}) {
    std::vector<float> parameters[2], first_moments[2], second_moments[2];
    for (int early = 0; early < 2; ++early) {
      GpuFixture gpu(rc.model);
      const std::size_t count = gpu.parameters.size();
      gpu.host.upload_moments(normal_values(count, 1e-3f, 31), std::vector<float>(count, 1e-6f));
      if (accumulated) gpu.mlp.upload_gradients(normal_values(count, 1e-2f, 21));
      DeviceBuffer<float> loss(1);
      if (output_head) {
        gpu.host.forward_with_output_head(dropout_key(rc.drop_probability), loss_slots(loss));
      } else {
        gpu.host.forward(dropout_key(rc.drop_probability));
        gpu.mlp.loss_and_gradient(loss_slots(loss));
      }
      gpu.host.set_adam_corrections(adam, 3);
      CudaMlp::EarlyUpdate update;
      update.adam = adam;
      update.gradient_scale = accumulated ? 0.5f : 1.0f;
      update.accumulated = accumulated;
      gpu.mlp.backward_without_weight_gradients(early == 1 ? &update : nullptr);
      gpu.mlp.adam_with_weight_gradients(adam, update.gradient_scale, accumulated);
      parameters[early] = gpu.mlp.download_parameters();
      std::tie(first_moments[early], second_moments[early]) = gpu.mlp.download_moments();
    }
    EXPECT_EQ(parameters[1], parameters[0]) << "accumulated " << accumulated;
    EXPECT_EQ(first_moments[1], first_moments[0]) << "accumulated " << accumulated;
    EXPECT_EQ(second_moments[1], second_moments[0]) << "accumulated " << accumulated;
    EXPECT_NE(parameters[0], GpuFixture(rc.model).parameters) << "the update changed nothing";
  }
}

TEST_P(CudaMlpReference, EarlyLayerUpdatesGiveTheSameBits) {
  expect_early_updates_give_the_same_bits(GetParam(), false);
}

// --- The fused output head (CudaMlp::forward_with_output_head, output_head.cuh). ---

// Where the head runs (host arithmetic, so this runs without a GPU too): the study's narrow heads at their small
// batches (medium: fan_in 64, large: fan_in 256, both fan_out 3), nowhere a thread would hold over 16 values of H.
TEST(CudaOutputHeadThreshold, ServesNarrowHeadsAtSmallBatchesOnly) {
  for (int batch : {1, 8, 16, 32, 64, 128, 256}) EXPECT_TRUE(kernels::output_head_supported(batch, 64, 3)) << batch;
  EXPECT_FALSE(kernels::output_head_supported(512, 64, 3));
  for (int batch : {1, 8, 16, 32, 64}) EXPECT_TRUE(kernels::output_head_supported(batch, 256, 3)) << batch;
  EXPECT_FALSE(kernels::output_head_supported(128, 256, 3));
  EXPECT_TRUE(kernels::output_head_supported(32, 512, 4));
  EXPECT_FALSE(kernels::output_head_supported(32, 513, 3));
  EXPECT_FALSE(kernels::output_head_supported(32, 64, 5));  // fan_out over 4
  EXPECT_TRUE(kernels::output_head_supported(1024, 16, 1));
  EXPECT_FALSE(kernels::output_head_supported(1024, 17, 1));
  EXPECT_FALSE(kernels::output_head_supported(1025, 1, 1));
  EXPECT_FALSE(kernels::output_head_supported(0, 64, 3));
}

// CudaMlp offers the head for fp32 only (tf32 and bf16 keep their precision's GEMMs), for the head shapes above, and
// refuses forward_with_output_head elsewhere instead of running something else.
TEST_F(CudaMlpTest, OutputHeadOnlyWhereItServes) {
  CudaStream stream;
  const MlpSpec medium = preset_model("medium");
  const MlpSpec large = preset_model("large");
  EXPECT_TRUE(CudaMlp(medium, 64, stream.get()).output_head_fusable());
  EXPECT_TRUE(CudaMlp(large, 32, stream.get()).output_head_fusable());
  EXPECT_FALSE(CudaMlp(large, 128, stream.get()).output_head_fusable());
  EXPECT_FALSE(CudaMlp(medium, 64, stream.get(), Precision::tf32).output_head_fusable());
  EXPECT_FALSE(CudaMlp(medium, 64, stream.get(), Precision::bf16).output_head_fusable());
  EXPECT_FALSE(CudaMlp(medium, 64, stream.get(), Precision::tf32x3).output_head_fusable());
  EXPECT_FALSE(CudaMlp(custom_model({3, 2}, 0.0), 8, stream.get()).output_head_fusable());  // no hidden layer
  CudaMlp wide_head(custom_model({37, 64, 48, 5}, 0.0), 24, stream.get());
  EXPECT_FALSE(wide_head.output_head_fusable());
  DeviceBuffer<float> loss(1);
  EXPECT_THROW(wide_head.forward_with_output_head(loss_slots(loss)), Error);
}

class CudaOutputHead : public ::testing::TestWithParam<ReferenceCase> {
 protected:
  void SetUp() override { MGPU_SKIP_WITHOUT_CUDA_DEVICE(); }
};

// The head on NaN-poisoned buffers (a value it fails to write shows as infinity) against the float64 reference: the
// output, the loss, dL/dy and the last hidden layer's dL/dZ (dL/dy W_L through that layer's ReLU and dropout, formed
// here from the reference's activations); then the rest of the fused step from there (backward without the output
// layer's product, the fused optimizer) against the reference's gradients, as FusedWeightGradientAdam checks them.
TEST_P(CudaOutputHead, MatchesFloat64ReferenceAndFeedsTheFusedStep) {
  const ReferenceCase& rc = GetParam();
  const AdamSettings adam;
  GpuFixture gpu(rc.model);
  ASSERT_TRUE(gpu.mlp.output_head_fusable());
  const std::size_t count = gpu.parameters.size();
  gpu.host.upload_moments(std::vector<float>(count, 0.0f), std::vector<float>(count, 0.0f));
  const cpu::DropoutKey key = dropout_key(rc.drop_probability);
  DeviceBuffer<float> loss(1);
  copy_to_device(loss, std::vector<float>{std::numeric_limits<float>::quiet_NaN()}, gpu.stream.get());
  gpu.host.forward_with_output_head(key, loss_slots(loss));
  const Reference reference(rc.model, gpu, key);

  EXPECT_LE(relative_error(gpu.mlp.download_output(), reference.activations.output), kMathTolerance) << "output";
  const float gpu_loss = copy_to_host(loss, gpu.stream.get()).front();
  ASSERT_TRUE(std::isfinite(gpu_loss));
  EXPECT_LE(std::abs(gpu_loss - reference.loss) / reference.loss, kMathTolerance) << "loss";
  // With no slot for the step (a replay beyond the run's steps) the head writes no loss; it rewrites the same dL/dy
  // and dL/dZ (same inputs, same bits), so the checks below still hold.
  copy_to_device(loss, std::vector<float>{std::numeric_limits<float>::quiet_NaN()}, gpu.stream.get());
  gpu.mlp.output_head(kernels::LossSlots{loss.data(), 0});
  EXPECT_TRUE(std::isnan(copy_to_host(loss, gpu.stream.get()).front())) << "a loss written without a slot";
  const std::vector<DenseLayer> layers = rc.model.model.layers();
  const int last = static_cast<int>(layers.size()) - 1;
  EXPECT_LE(relative_error(gpu.mlp.download_output_gradient(last), reference.grad_output), kMathTolerance) << "dL/dy";
  const DenseLayer& head = layers[last];
  const std::vector<double>& hidden = reference.activations.hidden[last - 1];
  const double keep_scale = 1.0 / (1.0 - double(rc.drop_probability));
  std::vector<double> hidden_gradient(hidden.size());
  for (int b = 0; b < rc.model.batch; ++b) {
    for (int i = 0; i < head.fan_in; ++i) {
      double sum = 0.0;
      for (int o = 0; o < head.fan_out; ++o) {
        sum += reference.grad_output[std::size_t(b) * head.fan_out + o] *
               double(gpu.parameters[head.weight_offset + std::size_t(o) * head.fan_in + i]);
      }
      const std::size_t index = std::size_t(b) * head.fan_in + i;
      hidden_gradient[index] = hidden[index] > 0.0 ? sum * keep_scale : 0.0;
    }
  }
  EXPECT_LE(relative_error(gpu.mlp.download_output_gradient(last - 1), hidden_gradient), kMathTolerance)
      << "dL/dZ of the last hidden layer";

  gpu.mlp.backward_without_weight_gradients();
  gpu.host.adam_with_weight_gradients_at_step(adam, 1, 1.0f, false);
  expect_first_fused_update_matches(rc.model, gpu, reference, nullptr, 1.0, adam, "output head");
}

// Early updates hand the output layer over right after the head (its last reader): the same bits as without them.
TEST_P(CudaOutputHead, EarlyLayerUpdatesGiveTheSameBits) { expect_early_updates_give_the_same_bits(GetParam(), true); }

// The study's configurations where the fused optimizer runs the head (medium batch 64, large batch 32) and the edges
// of the head's block: batch 64 with 16 threads per sample at 16 values each (large), a batch that leaves part of the
// last warp idle (odd, 33 samples of 16 threads), 4 threads per sample with fan_out 4 (narrow, batch 200), and
// widths that are no multiple of 4.
std::vector<ReferenceCase> output_head_cases() {
  std::vector<ReferenceCase> cases;
  for (const ModelCase& model : std::vector<ModelCase>{{"medium_b64", preset_model("medium"), 64},
                                                       {"medium_b16", preset_model("medium"), 16},
                                                       {"large_b32", preset_model("large"), 32},
                                                       {"large_b64", preset_model("large"), 64},
                                                       {"odd_b33", custom_model({13, 21, 7, 2}, 0.0), 33},
                                                       {"narrow_b200", custom_model({10, 16, 4}, 0.0), 200}}) {
    cases.push_back({model, 0.0f});
    cases.push_back({model, 0.3f});
  }
  return cases;
}

// One forward, loss and backward of the fixture's batch under the dropout key.
void forward_and_backward(GpuFixture& gpu, const cpu::DropoutKey& key) {
  DeviceBuffer<float> loss(1);
  gpu.host.forward(key);
  gpu.mlp.loss_and_gradient(loss_slots(loss));
  gpu.mlp.backward();
}

// One step in a reduced precision (tf32, or bf16 operands with fp32 master weights) against the float64 reference,
// within that precision's bounds; the output error is printed so the bounds can be checked against measurements.
void expect_reduced_precision_matches(const ReferenceCase& rc, Precision precision, double output_tolerance,
                                      double gradient_tolerance, const char* label) {
  GpuFixture gpu(rc.model, precision);
  const cpu::DropoutKey key = dropout_key(rc.drop_probability);
  forward_and_backward(gpu, key);
  const Reference reference(rc.model, gpu, key);
  const double output_error = relative_error(gpu.mlp.download_output(), reference.activations.output);
  std::printf("[ measured ] %s %s: output relative error %.3g\n", label, rc.model.name.c_str(), output_error);
  EXPECT_LE(output_error, output_tolerance);
  expect_gradients_match(rc.model, gpu.mlp.download_gradients(), reference, gradient_tolerance, label);
}

TEST_P(CudaMlpReference, Tf32GradientsMatchFloat64ReferenceLoosely) {
  expect_reduced_precision_matches(GetParam(), Precision::tf32, kTf32Tolerance, kTf32GradientTolerance, "tf32");
}

TEST_P(CudaMlpReference, Bf16GradientsMatchFloat64ReferenceLoosely) {
  expect_reduced_precision_matches(GetParam(), Precision::bf16, kBf16Tolerance, kBf16GradientTolerance, "bf16");
}

// --- tf32x3 (split TF32, tf32x3_operands.hpp): fp32's accuracy from TF32 tensor-core products. ---

// tf32x3 keeps fp32's rounding of the operands but not fp32's summation: the tensor cores add the products in their
// own order and way. A pre-activation within that of zero takes the other side of the ReLU, and each such flip moves
// a layer's gradient by about 1 / sqrt(its nonzero dL/dZ) of its norm (0.8% for large's first layer at batch 32),
// whatever the precision: so the gradients are held to fp32's tolerance where a step has few pre-activations (the
// small and odd cases, a few thousand), and to a few flips' worth over the tens of thousands of tall and the presets.
// The output, continuous in the pre-activations, is held to fp32's tolerance everywhere, and a wrong split (a part
// lost, misplaced or paired with the wrong part) is off by 2^-11 or far more: the small cases see that too.
constexpr double kTf32x3ManyPreactivationsGradientTolerance = 5e-2;
double tf32x3_gradient_tolerance(const ModelCase& c) {
  const std::vector<int>& widths = c.model.widths;
  const long long preactivations =
      static_cast<long long>(c.batch) * (std::accumulate(widths.begin() + 1, widths.end() - 1, 0LL));
  return preactivations < 5000 ? kMathTolerance : kTf32x3ManyPreactivationsGradientTolerance;
}

// The largest relative error of the output and of every layer's weight and bias gradients against float64.
double worst_step_error(const ModelCase& c, CudaMlp& mlp, const Reference& reference) {
  double worst = relative_error(mlp.download_output(), reference.activations.output);
  const std::vector<float> gradients = mlp.download_gradients();
  for (const DenseLayer& layer : c.model.layers()) {
    worst = std::max(worst, relative_error(gradients, reference.gradients, layer.weight_offset, layer.weight_count()));
    if (layer.hidden)
      worst = std::max(worst, relative_error(gradients, reference.gradients, layer.bias_offset, layer.bias_count()));
  }
  return worst;
}

// A whole forward and backward in tf32x3 meets fp32's tolerance against float64; the same step with every product's
// small terms dropped (big x big alone: TF32 on the big parts) does not, so this test fails if the small terms are
// lost. The process's tunings are forgotten first, so that every product's first call tunes its shape, the ones that
// add to their output (the big x big parts) included.
TEST_P(CudaMlpReference, Tf32x3MatchesFloat64WithinFp32ToleranceAndNotWithoutItsSmallTerms) {
  const ReferenceCase& rc = GetParam();
  forget_gemm_tunings();
  double worst[2] = {0.0, 0.0};
  for (int dropped = 0; dropped < 2; ++dropped) {
    GpuFixture gpu(rc.model, Precision::tf32x3);
    if (dropped == 1) gpu.host.drop_small_products();
    const cpu::DropoutKey key = dropout_key(rc.drop_probability);
    forward_and_backward(gpu, key);
    const Reference reference(rc.model, gpu, key);
    worst[dropped] = worst_step_error(rc.model, gpu.mlp, reference);
    if (dropped == 0) {
      EXPECT_LE(relative_error(gpu.mlp.download_output(), reference.activations.output), kMathTolerance) << "output";
      expect_gradients_match(rc.model, gpu.mlp.download_gradients(), reference, tf32x3_gradient_tolerance(rc.model),
                             "tf32x3");
    }
  }
  std::printf("[ measured ] tf32x3 %s: worst relative error %.3g; without the small terms %.3g\n",
              rc.model.name.c_str(), worst[0], worst[1]);
  // The output or a gradient of the step without them: TF32's rounding, 2^-11 per operand, beyond fp32's tolerance.
  EXPECT_GT(worst[1], kMathTolerance) << "dropping the small terms stays within fp32's tolerance: the test cannot fail";
}

TEST_P(CudaMlpReference, Tf32x3BackwardInBucketPiecesMatchesFloat64Reference) {
  expect_backward_in_pieces_matches(GetParam(), Precision::tf32x3, tf32x3_gradient_tolerance(GetParam().model));
}

// Gradient accumulation: both parts of every weight gradient add to what the buffer holds (here half the gradient,
// so the result is 1.5 times it).
TEST_P(CudaMlpReference, Tf32x3AccumulatedGradientsAddToTheBuffer) {
  const ReferenceCase& rc = GetParam();
  GpuFixture gpu(rc.model, Precision::tf32x3);
  const cpu::DropoutKey key = dropout_key(rc.drop_probability);
  Reference expected(rc.model, gpu, key);
  std::vector<float> earlier(expected.gradients.size());
  for (std::size_t i = 0; i < earlier.size(); ++i) earlier[i] = static_cast<float>(0.5 * expected.gradients[i]);
  gpu.mlp.upload_gradients(earlier);
  for (std::size_t i = 0; i < earlier.size(); ++i) expected.gradients[i] += double(earlier[i]);
  DeviceBuffer<float> loss(1);
  gpu.host.forward(key);
  gpu.mlp.loss_and_gradient(loss_slots(loss));
  gpu.mlp.backward(whole_buffer_plan(rc.model.model), {}, true);
  expect_gradients_match(rc.model, gpu.mlp.download_gradients(), expected, tf32x3_gradient_tolerance(rc.model),
                         "tf32x3 accumulated");
}

// Adam writes the split of the weights it updates, which the next forward reads: whether it updates the whole buffer
// or bucket ranges that start anywhere (their flat offsets find each weight's layer and row), the forward after it is
// the float64 forward of the updated parameters, bit for bit the same either way.
TEST_F(CudaMlpTest, Tf32x3AdamWritesTheWeightSplitTheNextForwardReads) {
  const AdamSettings adam;
  for (const ModelCase& c : model_cases()) {
    const std::vector<float> gradients = normal_values(c.model.parameter_count(), 1e-2f, 41);
    std::vector<float> outputs[2];
    for (int buckets = 0; buckets < 2; ++buckets) {
      GpuFixture gpu(c, Precision::tf32x3);
      gpu.host.upload_moments(std::vector<float>(gradients.size(), 0.0f), std::vector<float>(gradients.size(), 0.0f));
      gpu.mlp.upload_gradients(gradients);
      gpu.host.set_adam_corrections(adam, 1);
      if (buckets == 0) {
        gpu.mlp.adam(adam);
      } else {
        for (const GradientBucket& bucket : overlap_plan(c.model, 4 * 37, 4 * 11).buckets)
          gpu.mlp.adam(adam, bucket.begin, bucket.end - bucket.begin);
      }
      gpu.parameters = gpu.mlp.download_parameters();  // the float64 forward of the updated weights
      const cpu::DropoutKey key = dropout_key(0.0f);
      gpu.host.forward(key);
      outputs[buckets] = gpu.mlp.download_output();
      const Reference reference(c, gpu, key);
      EXPECT_LE(relative_error(outputs[buckets], reference.activations.output), kMathTolerance)
          << c.name << (buckets == 1 ? ", Adam per bucket" : ", one Adam");
    }
    EXPECT_EQ(outputs[1], outputs[0]) << c.name;
  }
}

// The fused optimizer writes the fp32 weights only, not the copies another precision's next forward reads (tf32x3's
// split, bf16's copy): a model in another precision refuses it before enqueuing anything; the same call serves fp32.
TEST_F(CudaMlpTest, FusedOptimizerRefusesEveryPrecisionButFp32) {
  const AdamSettings adam;
  const ModelCase c{"medium_b128", preset_model("medium"), 128};
  for (Precision precision : {Precision::tf32, Precision::bf16, Precision::tf32x3}) {
    GpuFixture gpu(c, precision);
    EXPECT_THROW(gpu.mlp.adam_with_weight_gradients(adam), Error) << setting_name(precision);
  }
  GpuFixture fp32(c);
  EXPECT_NO_THROW(fp32.mlp.adam_with_weight_gradients(adam));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(fp32.stream.get()));
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
INSTANTIATE_TEST_SUITE_P(Cuda, CudaOutputHead, ::testing::ValuesIn(output_head_cases()), reference_case_name);

}  // namespace
}  // namespace mgpu
