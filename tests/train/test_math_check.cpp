// Purpose: tests of the math check (math_check.hpp) on a trainer whose parameters the test sets: the error in units of
// the reference's movement, the tolerance by precision, and the job's kept reference: computed once for every
// configuration that shares it, again for any change of what it depends on, never for a change of what it does not.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/mlp_spec.hpp"
#include "train/math_check.hpp"

namespace mgpu {
namespace {

// A trainer of two parameters: the reference moves them from (0, 0) to (3, 4); the step under test ends at `trained`.
class FakeTrainer : public Trainer {
 public:
  explicit FakeTrainer(std::vector<float> trained, std::string kind = "cpu")
      : trained_(std::move(trained)), kind_(std::move(kind)) {}
  RunRecord run(int) override { return RunRecord(1); }
  std::vector<float> parameters() const override { return trained_; }
  std::vector<float> parameters_after_steps(int) override { return trained_; }
  ReferenceRun reference_run(int steps) const override {
    ++reference_runs;
    last_steps = steps;
    return {{0.0, 0.0}, {3.0, 4.0}};
  }
  std::string device_kind() const override { return kind_; }

  mutable int reference_runs = 0;
  mutable int last_steps = 0;

 private:
  std::vector<float> trained_;
  std::string kind_;
};

TrainingSettings settings_of(int global_batch) {
  TrainingSettings settings;
  settings.model = preset_model("medium");
  settings.global_batch = global_batch;
  return settings;
}

TEST(MathCheck, ErrorIsTheDistanceFromTheReferenceInUnitsOfItsMovement) {
  FakeTrainer trainer({3.0f, 4.5f});  // 0.5 from (3, 4), which moved 5 from the start
  ReferenceRuns references;
  const MathCheck check = check_math(trainer, settings_of(32), references);
  EXPECT_DOUBLE_EQ(check.error, 0.1);
  EXPECT_EQ(check.steps, kMathCheckSteps);
  EXPECT_EQ(trainer.last_steps, kMathCheckSteps);
  EXPECT_DOUBLE_EQ(check.tolerance, kFp32Tolerance);
  EXPECT_TRUE(check.within_tolerance(check.error));
  EXPECT_FALSE(check.within_tolerance(0.1000001));
  EXPECT_FALSE(check.within_tolerance(std::nan("")));
}

TEST(MathCheck, AStepOfAnotherSizeHasNoError) {
  FakeTrainer trainer({3.0f});
  ReferenceRuns references;
  EXPECT_TRUE(std::isnan(check_math(trainer, settings_of(32), references).error));
}

TEST(MathCheck, FewerStepsThanTheCheckTakesAreAllChecked) {
  TrainingSettings settings = settings_of(32);
  settings.warmup_steps = 0;
  settings.measured_steps = 2;
  FakeTrainer trainer({3.0f, 4.0f});
  ReferenceRuns references;
  EXPECT_EQ(check_math(trainer, settings, references).steps, 2);
  EXPECT_EQ(trainer.last_steps, 2);
}

TEST(MathCheck, ToleranceFollowsTheGemmsAndTheAllReducesPrecision) {
  TrainingSettings settings = settings_of(32);
  settings.precision = Precision::tf32;
  EXPECT_DOUBLE_EQ(math_check_tolerance(settings), kTf32Tolerance);
  settings.precision = Precision::bf16;
  EXPECT_DOUBLE_EQ(math_check_tolerance(settings), kBf16Tolerance);
  settings.precision = Precision::tf32x3;  // held to fp32's: its claim
  EXPECT_DOUBLE_EQ(math_check_tolerance(settings), kFp32Tolerance);
  settings.precision = Precision::fp32;
  settings.grad_dtype = GradDtype::bf16;
  EXPECT_DOUBLE_EQ(math_check_tolerance(settings), kBf16GradientTolerance);
}

// The default command: the 1- and 2-GPU configurations of one global batch, five trials each, one reference.
TEST(ReferenceRuns, ConfigurationsOfOneGlobalBatchShareOneReference) {
  ReferenceRuns references;
  for (int trial = 0; trial < 5; ++trial) {
    for (int ranks : {1, 2}) {
      FakeTrainer trainer({3.0f, 4.0f});
      TrainingSettings settings = settings_of(32);
      // What the reference does not depend on: how the step under test runs.
      settings.graph = ranks == 1;
      settings.overlap = ranks == 2;
      settings.fused_optimizer = ranks == 1;
      settings.grad_dtype = ranks == 2 ? GradDtype::bf16 : GradDtype::fp32;
      settings.gemm_tuning = trial % 2 == 0 ? GemmTuning::step : GemmTuning::alone;
      settings.runs = 3 + trial;
      const MathCheck check = check_math(trainer, settings, references);
      EXPECT_DOUBLE_EQ(check.error, 0.0);
      EXPECT_EQ(trainer.reference_runs, trial == 0 && ranks == 1 ? 1 : 0);
    }
  }
  EXPECT_EQ(references.computed(), 1);
}

// Each change of what the reference depends on computes it again (the key tells them apart).
TEST(ReferenceRuns, EveryInputOfTheReferenceGivesAnotherKey) {
  const TrainingSettings base = settings_of(32);
  const std::string key = reference_key("cuda", base, 3);
  const std::vector<std::function<void(TrainingSettings&)>> changes = {
      [](TrainingSettings& s) { s.global_batch = 64; },
      [](TrainingSettings& s) { s.seed = 2; },
      [](TrainingSettings& s) { s.model = preset_model("large"); },
      [](TrainingSettings& s) { s.model.widths.back() = 4; },
      [](TrainingSettings& s) { s.model.dropout += 1e-12; },
      [](TrainingSettings& s) { s.adam.learning_rate = 2e-3f; },
      [](TrainingSettings& s) { s.adam.beta1 = 0.8f; },
      [](TrainingSettings& s) { s.adam.beta2 = 0.99f; },
      [](TrainingSettings& s) { s.adam.epsilon = 1e-8f; },
      [](TrainingSettings& s) { s.accumulate_steps = 2; },
      [](TrainingSettings& s) { s.precision = Precision::tf32; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    TrainingSettings changed = base;
    changes[i](changed);
    EXPECT_NE(reference_key("cuda", changed, 3), key) << "change " << i;
  }
  EXPECT_NE(reference_key("cpu", base, 3), key);
  EXPECT_NE(reference_key("cuda", base, 2), key);
  EXPECT_EQ(reference_key("cuda", base, 3), key);
}

TEST(ReferenceRuns, AnotherReferenceReplacesTheOneKept) {
  ReferenceRuns references;
  FakeTrainer trainer({3.0f, 4.0f});
  references.of(trainer, settings_of(32), 3);
  references.of(trainer, settings_of(64), 3);
  references.of(trainer, settings_of(64), 3);
  references.of(trainer, settings_of(32), 3);
  EXPECT_EQ(trainer.reference_runs, 3);
  EXPECT_EQ(references.computed(), 3);
  FakeTrainer gpu({3.0f, 4.0f}, "cuda");
  references.of(gpu, settings_of(32), 3);
  EXPECT_EQ(gpu.reference_runs, 1);
}

}  // namespace
}  // namespace mgpu
