// Purpose: the math check (math_check.hpp): the configuration's step and its plain reference from the same start.
#include "train/math_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "config/settings_table.hpp"
#include "platform/error.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/wall_clock.hpp"

namespace mgpu {

double math_check_tolerance(const TrainingSettings& settings) {
  // Units of the reference's movement (MathCheck::error). Adam's first update is lr * sign(g) wherever |g| >> epsilon,
  // so a gradient element that rounding moves across zero costs 2 lr, and a ReLU that rounding decides the other way
  // changes the sign of small gradients: two correct steps part by the share of such elements, which grows with the
  // batch (more near-zero sums). One wrong sample in every step flips a large share of the signs instead.
  // tf32x3 keeps fp32's: its claim is fp32's accuracy, against the fp32 reference step (cuda_reference_step.hpp).
  double tolerance = kFp32Tolerance;
  if (settings.precision == Precision::tf32) tolerance = kTf32Tolerance;
  if (settings.precision == Precision::bf16) tolerance = kBf16Tolerance;
  if (settings.grad_dtype == GradDtype::bf16) tolerance = std::max(tolerance, kBf16GradientTolerance);
  return tolerance;
}

void require_steps_of_a_run(const TrainingSettings& settings, int steps) {
  MGPU_REQUIRE(steps >= 1 && steps <= settings.total_steps(), "parameters_after_steps: " + std::to_string(steps) +
                                                                  " steps of a run of " +
                                                                  std::to_string(settings.total_steps()));
}

std::string reference_key(const std::string& device_kind, const TrainingSettings& settings, int steps) {
  return device_kind + " " + math_reference_text(settings) + " steps=" + std::to_string(steps);
}

const Trainer::ReferenceRun& ReferenceRuns::of(const Trainer& trainer, const TrainingSettings& settings, int steps) {
  std::string key = reference_key(trainer.device_kind(), settings, steps);
  if (key != key_) {
    key_.clear();  // no key for a run that failed half-way
    run_ = trainer.reference_run(steps);
    key_ = std::move(key);
    ++computed_;
  }
  return run_;
}

MathCheck check_math(Trainer& trainer, const TrainingSettings& settings, ReferenceRuns& references) {
  const auto start = std::chrono::steady_clock::now();
  MathCheck check;
  check.steps = std::min(kMathCheckSteps, settings.total_steps());
  check.tolerance = math_check_tolerance(settings);
  const std::vector<float> trained = trainer.parameters_after_steps(check.steps);
  const Trainer::ReferenceRun& run = references.of(trainer, settings, check.steps);
  const std::vector<double>& reference = run.trained;
  const std::vector<double>& initial = run.initial;
  double difference = 0.0, movement = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double off = (i < trained.size() ? double(trained[i]) : 0.0) - reference[i];
    difference += off * off;
    movement += (reference[i] - initial[i]) * (reference[i] - initial[i]);
  }
  check.error = trained.size() == reference.size() && movement > 0.0 ? std::sqrt(difference / movement)
                                                                     : std::numeric_limits<double>::quiet_NaN();
  check.seconds = seconds_since(start);
  return check;
}

bool gemm_corruption_requested() {
  const char* wanted = fault_hook("MGPU_FAULT_CORRUPT_GEMM");
  return wanted != nullptr && std::strcmp(wanted, "1") == 0;
}

}  // namespace mgpu
