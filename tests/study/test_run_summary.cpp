// Purpose: tests of the per-run summary: warm-up excluded, a distributed step is the max over ranks, and
// throughput = global_batch * measured_steps / sum of step times (docs/measurement.md).
#include <gtest/gtest.h>

#include "study/run_summary.hpp"

namespace mgpu {
namespace {

RunRecord record_with_steps(std::vector<double> step_ms, double forward_ms, double final_loss) {
  RunRecord record(static_cast<int>(step_ms.size()));
  for (int s = 0; s < record.total_steps; ++s) {
    record.ms(Phase::step, s) = step_ms[s];
    record.ms(Phase::forward, s) = forward_ms;
    record.loss[s] = final_loss + (record.total_steps - 1 - s);
  }
  return record;
}

TEST(RunSummary, StepIsMaxOverRanksAndWarmupIsExcluded) {
  // Step 0 is warm-up (huge, must be ignored); then rank 1 is slower at step 1, rank 0 at step 2.
  const std::vector<RunRecord> ranks = {record_with_steps({100.0, 1.0, 3.0}, 0.5, 0.2),
                                        record_with_steps({100.0, 2.0, 1.0}, 0.7, 0.4)};
  const RunSummary summary = summarize_run(ranks, 1, 64);
  EXPECT_DOUBLE_EQ(summary.mean_step_ms, (2.0 + 3.0) / 2);
  EXPECT_DOUBLE_EQ(summary.samples_per_second, 64.0 * 2 / 0.005);
  EXPECT_DOUBLE_EQ(summary.mean_ms[int(Phase::forward)], 0.7);
  EXPECT_DOUBLE_EQ(summary.final_loss, 0.3);
}

TEST(RunSummary, PhaseIsMaxOverRanksPerStepThenMeanOverSteps) {
  // The slower rank changes from step to step: the mean of the per-step maxima (4) differs from the max over ranks
  // of the per-rank means (3).
  RunRecord a(2), b(2);
  a.ms(Phase::forward, 0) = 4.0;
  a.ms(Phase::forward, 1) = 2.0;
  b.ms(Phase::forward, 0) = 2.0;
  b.ms(Phase::forward, 1) = 4.0;
  for (RunRecord* r : {&a, &b}) r->ms(Phase::step, 0) = r->ms(Phase::step, 1) = 5.0;
  EXPECT_DOUBLE_EQ(summarize_run({a, b}, 0, 8).mean_ms[int(Phase::forward)], 4.0);
}

TEST(RunSummary, WallPerMeasuredStepIsTheSlowestRanksSpan) {
  RunRecord a = record_with_steps({9.0, 1.0, 1.0, 1.0}, 0.5, 0.1);
  RunRecord b = a;
  a.measured_wall_ms = 3.3;  // three measured steps plus gaps
  b.measured_wall_ms = 4.5;
  EXPECT_DOUBLE_EQ(summarize_run({a, b}, 1, 8).wall_step_ms, 1.5);
}

}  // namespace
}  // namespace mgpu
