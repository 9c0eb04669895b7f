// Purpose: the persistent step (--step-kernel persistent) on one GPU: trained parameters against the float64 reference
// and against the chain of kernels, at batches 1 to the largest it serves and for custom models at its limits; two runs
// and graph against eager bit-identical; the marked step (one launch per phase) tiling the step and training the same
// bits as one launch; auto deciding by timing and recording it; and the models it cannot run refused in one line.
// Skips without a visible CUDA device.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "platform/error.hpp"
#include "platform/gpu_devices.hpp"
#include "train/cpu_mlp.hpp"
#include "train/cuda_trainer.hpp"
#include "train/persistent_plan.hpp"
#include "training_reference.hpp"

namespace mgpu {
namespace {

constexpr int kRun = 2;

class PersistentStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  }
};

TrainingSettings settings_for(const MlpSpec& model, int batch, StepKernel kernel) {
  TrainingSettings settings;
  settings.model = model;
  settings.global_batch = batch;
  settings.warmup_steps = 2;
  settings.measured_steps = 3;
  settings.seed = 7;
  settings.graph = true;
  settings.timing = TimingMode::step;
  settings.step_kernel = kernel;
  // The chain as the study runs it at this batch (the fused optimizer and its output head up to 64).
  settings.fused_optimizer = batch <= 64;
  return settings;
}

// ||p - p_ref|| / ||p_ref - p_0|| over elements [first, first + count): the math check's error, in units of the
// reference's own movement (math_check.hpp).
double movement_error(const std::vector<float>& trained, const std::vector<double>& reference,
                      const std::vector<double>& initial, std::size_t first = 0,
                      std::size_t count = static_cast<std::size_t>(-1)) {
  double difference = 0.0, movement = 0.0;
  for (std::size_t i = first; i < reference.size() && i - first < count; ++i) {
    difference += (trained[i] - reference[i]) * (trained[i] - reference[i]);
    movement += (reference[i] - initial[i]) * (reference[i] - initial[i]);
  }
  // A part the reference never moved (a layer whose units all stayed off) must not move either.
  return movement > 0.0 ? std::sqrt(difference / movement) : std::sqrt(difference);
}

// The error bounds in units of the reference's movement. The whole: half the math check's fp32 tolerance, for a
// wrong product or a dropped sample is off by a sizeable part of the movement and rounding by a few thousandths. Each
// layer's weights and biases apart: the tolerance itself (a part of a few dozen elements moves little, so one
// element's rounding weighs more there), which still catches a wrong bias gradient that the whole would dilute.
constexpr double kMovementBound = 0.05;
constexpr double kPartMovementBound = 0.1;

// `trained` against `reference` (both from `initial`): the whole and each layer's weights and biases.
void expect_within_movement(const std::vector<float>& trained, const std::vector<double>& reference,
                            const std::vector<double>& initial, const MlpSpec& model, const std::string& label) {
  EXPECT_LE(movement_error(trained, reference, initial), kMovementBound) << label;
  for (const DenseLayer& layer : model.layers()) {
    EXPECT_LE(movement_error(trained, reference, initial, layer.weight_offset, layer.weight_count()),
              kPartMovementBound)
        << label << ": weights " << layer.fan_in << "x" << layer.fan_out;
    if (layer.hidden) {
      EXPECT_LE(movement_error(trained, reference, initial, layer.bias_offset, layer.bias_count()), kPartMovementBound)
          << label << ": biases of " << layer.fan_in << "x" << layer.fan_out;
    }
  }
}

std::vector<double> initial_parameters(const TrainingSettings& settings) {
  std::vector<double> initial(settings.model.parameter_count());
  cpu::initialize_parameters(settings.model, settings.seed, kRun, initial.data());
  return initial;
}

struct ReferenceCase {
  std::string name;
  MlpSpec model;
  int batch;
  // Also ||p - p_ref|| / ||p_ref|| <= 1e-4, the bound the chain's tests hold its fused step to (float64 against fp32
  // over a few steps): for the models and batches where Adam's sign-like first updates leave it room.
  bool relative_bound;
};

std::vector<ReferenceCase> reference_cases() {
  const MlpSpec medium = preset_model("medium");
  std::vector<int> deep(kernels::kPersistentMaxLayers + 1, 9);  // 16 layers: the most the kernel's tables hold
  deep.front() = 21;
  deep.back() = 5;
  return {
      {"medium b1", medium, 1, true},
      {"medium b8", medium, 8, true},
      {"medium b13", medium, 13, true},
      {"medium b32", medium, 32, true},
      {"medium b64", medium, 64, true},
      {"medium b128 (the largest batch)", medium, kPersistentMaxBatch, false},
      // One hidden layer (no backward launch), widths of no multiple of 4, 16 outputs (the most the head serves).
      {"33-20-16", custom_model({33, 20, kernels::kPersistentMaxOutputs}, 0.25), 29, true},
      {"16 layers", custom_model(deep, 0.1), 7, true},
      {"no dropout", custom_model({50, 40, 30, 3}, 0.0), 64, true},
      {"large b8", preset_model("large"), 8, false},
  };
}

// The persistent step's parameters after run kRun of `settings`, against the float64 reference and against the chain
// of kernels (the same settings, --step-kernel chain).
TEST_F(PersistentStepTest, TrainsAsTheFloat64ReferenceAndTheChain) {
  for (const ReferenceCase& c : reference_cases()) {
    TrainingSettings settings = settings_for(c.model, c.batch, StepKernel::persistent);
    CudaTrainer persistent(settings, MPI_COMM_SELF, 0);
    ASSERT_TRUE(persistent.runs_persistent_step()) << c.name;
    EXPECT_EQ(persistent.step_kernel_chosen(), "persistent") << c.name;
    const RunRecord record = persistent.run(kRun);
    for (float loss : record.loss) EXPECT_TRUE(std::isfinite(loss) && loss > 0.0f) << c.name << ": loss " << loss;
    const std::vector<float> trained = persistent.parameters();

    settings.step_kernel = StepKernel::chain;
    CudaTrainer chain(settings, MPI_COMM_SELF, 0);
    ASSERT_FALSE(chain.runs_persistent_step()) << c.name;
    const RunRecord chain_record = chain.run(kRun);
    const std::vector<float> chained = chain.parameters();

    const std::vector<double> reference = testing_reference::training_run(settings, kRun);
    const std::vector<double> initial = initial_parameters(settings);
    const std::vector<double> chain_as_reference(chained.begin(), chained.end());
    const double error = movement_error(trained, reference, initial);
    const double chain_error = movement_error(chained, reference, initial);
    const double from_chain = movement_error(trained, chain_as_reference, initial);
    const double relative = testing_reference::relative_error(trained, reference);
    std::cout << c.name << ": persistent " << error << ", chain " << chain_error
              << " of the float64 reference's movement; persistent against chain " << from_chain
              << "; relative to float64 " << relative << "; first loss " << record.loss.front() << " (chain "
              << chain_record.loss.front() << ")" << std::endl;
    expect_within_movement(trained, reference, initial, c.model, c.name + " against float64");
    expect_within_movement(trained, chain_as_reference, initial, c.model, c.name + " against the chain");
    if (c.relative_bound) EXPECT_LE(relative, 1e-4) << c.name;
    // The losses of the two paths: the same function of the same parameters, summed in other orders.
    EXPECT_NEAR(record.loss.front(), chain_record.loss.front(), 1e-5 * chain_record.loss.front()) << c.name;
    if (relative > 1e-4 && c.relative_bound) {
      const double margin = testing_reference::smallest_relu_margin(settings, kRun);
      std::cout << "  smallest ReLU margin of the float64 run " << margin
                << (margin < testing_reference::kUndecidableReluMargin ? " (a ReLU within fp32 rounding)" : "")
                << std::endl;
    }
  }
}

// Determinism: the weight-gradient sums run in a fixed order (tiles, parts, a fixed tree), so a run repeated, a run
// of a second trainer, and eager launches instead of the graph all give the same bits.
TEST_F(PersistentStepTest, RunsRepeatBitForBitGraphOrEager) {
  for (int batch : {8, 64}) {
    TrainingSettings settings = settings_for(preset_model("medium"), batch, StepKernel::persistent);
    CudaTrainer first(settings, MPI_COMM_SELF, 0);
    const RunRecord record = first.run(kRun);
    const std::vector<float> parameters = first.parameters();
    first.run(kRun + 1);  // another run between: a run starts afresh from (seed, run)
    const RunRecord again = first.run(kRun);
    EXPECT_EQ(first.parameters(), parameters) << batch;
    EXPECT_EQ(again.loss, record.loss) << batch;
    CudaTrainer second(settings, MPI_COMM_SELF, 0);
    second.run(kRun);
    EXPECT_EQ(second.parameters(), parameters) << batch;
    settings.graph = false;
    CudaTrainer eager(settings, MPI_COMM_SELF, 0);
    ASSERT_TRUE(eager.runs_persistent_step());
    const RunRecord eager_record = eager.run(kRun);
    EXPECT_EQ(eager.parameters(), parameters) << batch;
    EXPECT_EQ(eager_record.loss, record.loss) << batch;
  }
}

// --timing events: one launch per phase with the marks between them; the phases tile the step (forward + backward +
// optimizer = step), the model with one hidden layer has an empty backward, and the three launches train the same bits
// as the one launch of --timing step.
TEST_F(PersistentStepTest, MarkedPhasesTileTheStepAndTrainTheSameBits) {
  for (const MlpSpec& model : {preset_model("medium"), custom_model({33, 20, 3}, 0.25)}) {
    TrainingSettings settings = settings_for(model, 16, StepKernel::persistent);
    CudaTrainer whole(settings, MPI_COMM_SELF, 0);
    const RunRecord unmarked = whole.run(kRun);
    settings.timing = TimingMode::events;
    CudaTrainer marked(settings, MPI_COMM_SELF, 0);
    const RunRecord record = marked.run(kRun);
    EXPECT_EQ(marked.parameters(), whole.parameters()) << model.widths_string();
    EXPECT_EQ(record.loss, unmarked.loss) << model.widths_string();
    const bool has_backward = model.layer_count() > 2;
    for (int step = 0; step < record.total_steps; ++step) {
      const double forward = record.ms(Phase::forward, step);
      const double backward = record.ms(Phase::backward, step);
      const double optimizer = record.ms(Phase::optimizer, step);
      EXPECT_GT(forward, 0.0) << step;
      EXPECT_GE(backward, 0.0) << step;
      if (has_backward) EXPECT_GT(backward, 0.0) << step;
      EXPECT_GT(optimizer, 0.0) << step;
      EXPECT_EQ(record.ms(Phase::allreduce, step), 0.0) << step;
      EXPECT_NEAR(record.ms(Phase::step, step), forward + backward + optimizer, 1e-3) << step;
    }
  }
}

// --step-kernel auto: set-up times the replayed step both ways and keeps one; whichever it keeps is recorded and
// trains as the float64 reference says.
TEST_F(PersistentStepTest, AutoDecidesAtSetUpAndRecordsWhatRuns) {
  for (int batch : {8, 64}) {
    TrainingSettings settings = settings_for(preset_model("medium"), batch, StepKernel::automatic);
    settings.gemm_tuning = GemmTuning::step;
    CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
    const std::string chosen = trainer.step_kernel_chosen();
    EXPECT_EQ(chosen, trainer.runs_persistent_step() ? "persistent" : "chain");
    std::cout << "medium batch " << batch << ": --step-kernel auto chose " << chosen << std::endl;
    trainer.run(kRun);
    expect_within_movement(trainer.parameters(), testing_reference::training_run(settings, kRun),
                           initial_parameters(settings), settings.model, "auto, batch " + std::to_string(batch));
  }
}

// Asked for where it cannot run: one line naming the limit, nothing trained. Under auto the same configurations run
// the chain without a word.
TEST_F(PersistentStepTest, RefusesWhatItCannotRunAndAutoFallsBackToTheChain) {
  struct Refused {
    MlpSpec model;
    int batch;
    const char* naming;
  };
  for (const Refused& r : {Refused{preset_model("medium"), kPersistentMaxBatch + 1, "local batch 129"},
                           Refused{custom_model({12, 8, kernels::kPersistentMaxOutputs + 1}, 0.1), 8, "17 outputs"},
                           Refused{custom_model({12, 3}, 0.0), 8, "no hidden layer"}}) {
    TrainingSettings settings = settings_for(r.model, r.batch, StepKernel::persistent);
    try {
      CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
      ADD_FAILURE() << r.naming << ": not refused";
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--step-kernel persistent: "), std::string::npos) << message;
      EXPECT_NE(message.find(r.naming), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    settings.step_kernel = StepKernel::automatic;
    CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
    EXPECT_FALSE(trainer.runs_persistent_step()) << r.naming;
    EXPECT_EQ(trainer.step_kernel_chosen(), "chain") << r.naming;
  }
  // What the resolver refuses on the command line, refused by a trainer made from settings by hand too.
  TrainingSettings accumulating = settings_for(preset_model("medium"), 8, StepKernel::persistent);
  accumulating.accumulate_steps = 2;
  EXPECT_THROW(CudaTrainer(accumulating, MPI_COMM_SELF, 0), UsageError);
  // The precisions whose products it does not form: asked for, one line; under auto, the chain.
  for (Precision other : {Precision::tf32, Precision::bf16, Precision::tf32x3}) {
    TrainingSettings settings = settings_for(preset_model("medium"), 8, StepKernel::persistent);
    settings.precision = other;
    settings.fused_optimizer = false;
    try {
      CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
      ADD_FAILURE() << setting_name(other) << ": not refused";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("--step-kernel persistent: needs --precision fp32, not ") + setting_name(other));
    }
    settings.step_kernel = StepKernel::automatic;
    CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
    EXPECT_FALSE(trainer.runs_persistent_step()) << setting_name(other);
    EXPECT_EQ(trainer.step_kernel_chosen(), "chain") << setting_name(other);
  }
}

}  // namespace
}  // namespace mgpu
