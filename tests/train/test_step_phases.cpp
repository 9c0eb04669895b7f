// Purpose: tests of the mapping from a step's marks to its phase times (step_phases.hpp), which both trainers use:
// each phase from the marks it is defined by, the phases summing to the step, and what a step that does not update,
// does not reduce, or was not marked records; which steps update and reduce.
#include <gtest/gtest.h>

#include <cmath>

#include "train/step_phases.hpp"

namespace mgpu {
namespace {

// A reduced, updating step: forward to 1, backward to 3, the reduction 2.5 -> 4.5, the update from 4 to 6.
StepMarkTimes reduced_step() {
  StepMarkTimes marks;
  marks.forward_end = 1.0;
  marks.backward_end = 3.0;
  marks.allreduce_start = 2.5;
  marks.allreduce_end = 4.5;
  marks.optimizer_start = 4.0;
  marks.end = 6.0;
  return marks;
}

TEST(StepPhases, AReducedStepTakesEachPhaseFromItsMarks) {
  RunRecord record(2);
  record_marked_step(record, 1, reduced_step(), {true, true}, true);
  EXPECT_DOUBLE_EQ(record.ms(Phase::forward, 1), 1.0);
  EXPECT_DOUBLE_EQ(record.ms(Phase::backward, 1), 2.0);
  EXPECT_DOUBLE_EQ(record.ms(Phase::allreduce, 1), 2.0);     // start to end of the reduction, overlap included
  EXPECT_DOUBLE_EQ(record.ms(Phase::exposed_comm, 1), 1.5);  // backward's end to the reduction's
  EXPECT_DOUBLE_EQ(record.ms(Phase::optimizer, 1), 2.0);     // from the optimizer's own start
  EXPECT_DOUBLE_EQ(record.ms(Phase::step, 1), 6.0);
  EXPECT_DOUBLE_EQ(record.ms(Phase::step, 0), 0.0);  // other steps untouched
}

TEST(StepPhases, AStepWithoutReductionUpdatesFromBackwardsEnd) {
  RunRecord record(1);
  StepMarkTimes marks = reduced_step();
  marks.allreduce_start = marks.allreduce_end = marks.optimizer_start = StepMarkTimes::kUnmarked;
  record_marked_step(record, 0, marks, {true, false}, true);
  EXPECT_DOUBLE_EQ(record.ms(Phase::allreduce, 0), 0.0);
  EXPECT_DOUBLE_EQ(record.ms(Phase::exposed_comm, 0), 0.0);
  EXPECT_DOUBLE_EQ(record.ms(Phase::optimizer, 0), 3.0);
  const double sum = record.ms(Phase::forward, 0) + record.ms(Phase::backward, 0) + record.ms(Phase::optimizer, 0);
  EXPECT_DOUBLE_EQ(sum, record.ms(Phase::step, 0));
}

TEST(StepPhases, OnlyTheLastStepOfAnAccumulationGroupUpdatesAndOnlyItReduces) {
  TrainingSettings settings;
  settings.accumulate_steps = 3;
  for (int step = 0; step < 6; ++step) {
    const bool last = step % 3 == 2;
    for (bool reduces : {false, true}) {
      const StepWork work = work_of_step(settings, step, reduces);
      EXPECT_EQ(work.update, last) << "step " << step;
      EXPECT_EQ(work.reduced, last && reduces) << "step " << step << (reduces ? ", reducing" : ", one rank");
    }
  }
}

TEST(StepPhases, AStepThatOnlyAccumulatesIsBackwardToItsEnd) {
  RunRecord record(1);
  StepMarkTimes marks;
  marks.forward_end = 1.0;
  marks.end = 2.5;  // backward's end is the step's
  record_marked_step(record, 0, marks, {false, true}, true);
  EXPECT_DOUBLE_EQ(record.ms(Phase::backward, 0), 1.5);
  for (Phase phase : {Phase::allreduce, Phase::exposed_comm, Phase::optimizer})
    EXPECT_DOUBLE_EQ(record.ms(phase, 0), 0.0) << phase_name(phase);
}

TEST(StepPhases, WhereTheUpdateFollowsTheReductionThePhasesSumToTheStep) {
  RunRecord record(1);
  StepMarkTimes marks = reduced_step();
  marks.optimizer_start = marks.allreduce_end;  // the CPU fallback's order: reduce, then update
  record_marked_step(record, 0, marks, {true, true}, true);
  const double sum = record.ms(Phase::forward, 0) + record.ms(Phase::backward, 0) + record.ms(Phase::exposed_comm, 0) +
                     record.ms(Phase::optimizer, 0);
  EXPECT_DOUBLE_EQ(sum, record.ms(Phase::step, 0));
}

TEST(StepPhases, AStepMarkedAtItsEndsOnlyKeepsItsTime) {
  RunRecord record(1);
  StepMarkTimes marks;
  marks.end = 0.25;
  record_marked_step(record, 0, marks, {true, true}, false);
  EXPECT_DOUBLE_EQ(record.ms(Phase::step, 0), 0.25);
  for (Phase phase : {Phase::forward, Phase::backward, Phase::allreduce, Phase::exposed_comm, Phase::optimizer})
    EXPECT_TRUE(std::isnan(record.ms(phase, 0))) << phase_name(phase);
}

TEST(StepPhases, AnUnmarkedRunGivesEachPartItsMean) {
  RunRecord record(5);
  record_unmarked_steps(record, 2, 0.5, 0.25);
  for (int step = 0; step < 5; ++step) {
    EXPECT_DOUBLE_EQ(record.ms(Phase::step, step), step < 2 ? 0.5 : 0.25) << step;
    EXPECT_TRUE(std::isnan(record.ms(Phase::forward, step)));
    EXPECT_TRUE(std::isnan(record.ms(Phase::optimizer, step)));
  }
}

}  // namespace
}  // namespace mgpu
