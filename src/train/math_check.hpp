// Purpose: the math check of every measured configuration (docs/measurement.md, "Math check"): after set-up, a few
// steps of the configuration's exact step from run 0's initialisation against the plain reference of the same global
// batch; the relative error, the tolerance of the configuration's precision, and whether it passed.
#pragma once

#include <limits>
#include <string>

#include "train/trainer.hpp"

namespace mgpu {

// Steps the check trains (fewer when a run has fewer): enough for Adam's moments and every kind of step under
// --accumulate 2 to take part, few enough to cost well under a run.
inline constexpr int kMathCheckSteps = 3;

struct MathCheck {
  int steps = 0;
  // ||p - p_ref|| / ||p_ref - p_0||: the distance from the reference's parameters in units of the reference's own
  // movement from the initial parameters p_0. A step that drops part of the batch or a wrong product is off by a
  // sizeable part of that movement; rounding, by little.
  double error = std::numeric_limits<double>::quiet_NaN();
  double tolerance = 0.0;
  double seconds = 0.0;  // the check's wall time on this rank, the reference's included where it was computed
  // Whether an error (this rank's or another's) is within the tolerance; NaN never is.
  bool within_tolerance(double some_error) const { return some_error <= tolerance; }
};

// Tolerances of MathCheck::error by the precision of the GEMMs (the reference computes in the same one; tf32x3's in
// fp32, and it is held to fp32's tolerance) and of the all-reduce (the reference reduces nothing, in fp32);
// docs/measurement.md, "Math check", gives the measurements behind them. The largest fp32 error of a correct step seen
// was 0.053 (large, batch 4096, 1 x H100).
inline constexpr double kFp32Tolerance = 0.1;
inline constexpr double kTf32Tolerance = 0.2;
inline constexpr double kBf16Tolerance = 0.2;
inline constexpr double kBf16GradientTolerance = 0.15;

// The tolerance for a configuration: by the precision of its GEMMs and of its all-reduce.
double math_check_tolerance(const TrainingSettings& settings);

// What Trainer::parameters_after_steps may be asked for: 1 to settings.total_steps() steps; Error otherwise.
void require_steps_of_a_run(const TrainingSettings& settings, int steps);

// The reference runs of a job, kept so that configurations whose reference is the same compute it once: the 1- and
// N-GPU configurations of a global batch and every trial of each (the user's default command checks 10 to 20
// configurations of one global batch; each reference of the large model allocates a model, trains it and copies its
// parameters back twice). One run is kept, the last one asked for: a sweep runs a batch's configurations together.
class ReferenceRuns {
 public:
  // The reference of `steps` steps of `settings` on `trainer`'s device: trainer.reference_run(steps) the first time
  // for its key (reference_key), else the run kept.
  const Trainer::ReferenceRun& of(const Trainer& trainer, const TrainingSettings& settings, int steps);
  // How many references were computed (not taken from the one kept).
  int computed() const noexcept { return computed_; }

 private:
  std::string key_;
  Trainer::ReferenceRun run_;
  int computed_ = 0;
};

// Everything a reference run depends on (Trainer::reference_run: the device's kind, the model, the global batch, the
// seed, Adam, the accumulation, the GEMMs' precision and the steps) and nothing it does not (ranks, graph, overlap,
// fusion, tuning, the all-reduce's precision), as text: equal keys, equal references.
std::string reference_key(const std::string& device_kind, const TrainingSettings& settings, int steps);

// Trains the check's steps with `trainer` (collective over its ranks) and compares them with the reference (this rank
// alone), taken from `references` or computed into it.
MathCheck check_math(Trainer& trainer, const TrainingSettings& settings, ReferenceRuns& references);

// Test-only fault hook (docs/reliability.md): MGPU_FAULT_CORRUPT_GEMM=1 makes the step compute a wrong product (the
// CUDA back-end's tuned GEMMs, the CPU fallback's output layer), so that a test sees the math check refuse it.
bool gemm_corruption_requested();

}  // namespace mgpu
