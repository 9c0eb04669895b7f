// Purpose: marks to phase times (step_phases.hpp).
#include "train/step_phases.hpp"

namespace mgpu {

StepWork work_of_step(const TrainingSettings& settings, int step, bool reduces) {
  const bool update = settings.ends_accumulation(step);
  return {update, reduces && update};
}

void record_marked_step(RunRecord& record, int step, const StepMarkTimes& marks, StepWork work, bool phases) {
  const auto set = [&](Phase phase, double ms) { record.ms(phase, step) = ms; };
  set(Phase::step, marks.end);
  if (!phases) {
    for (Phase phase : {Phase::forward, Phase::backward, Phase::allreduce, Phase::exposed_comm, Phase::optimizer})
      set(phase, StepMarkTimes::kUnmarked);
    return;
  }
  set(Phase::forward, marks.forward_end);
  if (!work.update) {
    set(Phase::backward, marks.end - marks.forward_end);
    for (Phase phase : {Phase::allreduce, Phase::exposed_comm, Phase::optimizer}) set(phase, 0.0);
    return;
  }
  set(Phase::backward, marks.backward_end - marks.forward_end);
  set(Phase::allreduce, work.reduced ? marks.allreduce_end - marks.allreduce_start : 0.0);
  set(Phase::exposed_comm, work.reduced ? marks.allreduce_end - marks.backward_end : 0.0);
  set(Phase::optimizer, marks.end - (work.reduced ? marks.optimizer_start : marks.backward_end));
}

void record_unmarked_steps(RunRecord& record, int warmup_steps, double warmup_mean_ms, double measured_mean_ms) {
  for (int step = 0; step < record.total_steps; ++step) {
    for (int p = 0; p < kPhaseCount; ++p) record.ms(Phase(p), step) = StepMarkTimes::kUnmarked;
    record.ms(Phase::step, step) = step < warmup_steps ? warmup_mean_ms : measured_mean_ms;
  }
}

}  // namespace mgpu
