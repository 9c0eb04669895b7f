// Purpose: the one mapping from a step's timing marks to the phase times of docs/measurement.md, used by the CUDA and
// the CPU trainer alike, so that both fill a run's record by the same rules in every --timing mode.
#pragma once

#include <limits>

#include "config/step_settings.hpp"
#include "results/run_record.hpp"

namespace mgpu {

// The instants one marked step recorded, in ms from its start mark; a mark the step did not record stays NaN.
struct StepMarkTimes {
  static constexpr double kUnmarked = std::numeric_limits<double>::quiet_NaN();
  double forward_end = kUnmarked;      // loss and dL/dy written
  double backward_end = kUnmarked;     // last gradient written (a step that does not update ends there instead)
  double allreduce_start = kUnmarked;  // the first reduction may begin (steps that reduce)
  double allreduce_end = kUnmarked;    // the last reduction done
  double optimizer_start = kUnmarked;  // the update may begin (steps that reduce)
  double end = kUnmarked;              // the step is over
};

// What a step did: whether it updated (ended an accumulation group) and whether it reduced (more than one rank).
struct StepWork {
  bool update = true;
  bool reduced = false;
};

// What step `step` of a run does: it updates where it ends an accumulation group, and reduces where it updates and
// the job has gradients to reduce (`reduces`: more than one rank).
StepWork work_of_step(const TrainingSettings& settings, int step, bool reduces);

// Fills step `step` of `record` from its marks. phases = the run marked every phase; otherwise only the step time
// was marked (--timing step) and every other phase is NaN. A step that does not update has backward up to its end
// and zero reduction and optimizer phases; a step that does not reduce has zero reduction phases and its optimizer
// starts at backward's end; exposed_comm runs from backward's end to the last reduction's, so the phases of a step
// sum to its time (forward + backward + exposed_comm + optimizer).
void record_marked_step(RunRecord& record, int step, const StepMarkTimes& marks, StepWork work, bool phases);

// A run without marks inside its steps: every phase NaN, each step its part's mean step time (warm-up or measured),
// which is all a pair of marks per part can say.
void record_unmarked_steps(RunRecord& record, int warmup_steps, double warmup_mean_ms, double measured_mean_ms);

}  // namespace mgpu
