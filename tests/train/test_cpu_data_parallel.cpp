// Purpose: data parallelism is exact: N ranks (MPI_Allreduce average) end with the weights 1 rank gets on the same
// global batches, with and without gradient accumulation; the CPU trainer alone (one rank: no all-reduce, every update
// applied) and its accumulation (K = 1, 2, 3) match the float64 reference. Runs under `mpiexec -n N` for N dividing
// the global batch of 8 (CTest: 2 and 4).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "train/cpu_trainer.hpp"
#include "training_reference.hpp"

namespace mgpu {
namespace {

TrainingSettings settings_for(double dropout, int accumulate_steps = 1) {
  TrainingSettings settings;
  settings.model = custom_model({40, 32, 16, 3}, dropout);
  settings.global_batch = 8;
  settings.warmup_steps = 0;
  settings.measured_steps = 20;
  settings.seed = 42;
  settings.accumulate_steps = accumulate_steps;
  return settings;
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double error = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    error += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(error / norm);
}

void expect_ranks_equal_one(double dropout, int accumulate_steps = 1) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const TrainingSettings settings = settings_for(dropout, accumulate_steps);
  if (world < 2 || settings.global_batch % world != 0)
    GTEST_SKIP() << "needs 2 or more ranks dividing the global batch of " << settings.global_batch
                 << " (mpiexec -n 2 or "
                 << "-n 4), got " << world;
  CpuTrainer distributed(settings, MPI_COMM_WORLD);
  CpuTrainer alone(settings, MPI_COMM_SELF);
  const RunRecord distributed_record = distributed.run(3);
  const RunRecord alone_record = alone.run(3);
  const double difference = relative_difference(distributed.parameters(), alone.parameters());
  std::printf(
      "[ measured ] dropout %.1f, accumulate %d: %d-rank vs 1-rank relative weight difference after 20 "
      "steps: %.3g\n",
      dropout, accumulate_steps, world, difference);
  EXPECT_LE(difference, 1e-5);
  // The training actually moved the weights and the loss fell.
  EXPECT_LT(alone_record.loss.back(), alone_record.loss.front());
  // Each rank's loss is over its share of the batch; their mean is the 1-rank loss of the same step.
  double mean_first_loss = 0;
  double mine = distributed_record.loss.front();
  MPI_Allreduce(&mine, &mean_first_loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_NEAR(mean_first_loss / world, alone_record.loss.front(), 1e-6 * alone_record.loss.front());
  // Timings were recorded for every step, and the all-reduce happened only with several ranks, on the steps that end an
  // accumulation.
  for (int s = 0; s < distributed_record.total_steps; ++s) {
    EXPECT_GT(distributed_record.ms(Phase::step, s), 0.0);
    if (settings.ends_accumulation(s)) {
      EXPECT_GT(distributed_record.ms(Phase::allreduce, s), 0.0);
    } else {
      EXPECT_EQ(distributed_record.ms(Phase::allreduce, s), 0.0);
      EXPECT_EQ(distributed_record.ms(Phase::optimizer, s), 0.0);
    }
    EXPECT_EQ(alone_record.ms(Phase::allreduce, s), 0.0);
    EXPECT_GE(distributed_record.ms(Phase::step, s) + 1e-9,
              distributed_record.ms(Phase::forward, s) + distributed_record.ms(Phase::backward, s));
  }
}

TEST(CpuDataParallel, RanksGiveOneRanksWeightsWithoutDropout) { expect_ranks_equal_one(0.0); }
// Dropout masks are keyed by global sample index, so even with dropout the two runs are the same computation.
TEST(CpuDataParallel, RanksGiveOneRanksWeightsWithDropout) { expect_ranks_equal_one(0.3); }
TEST(CpuDataParallel, RanksGiveOneRanksWeightsWithAccumulation) { expect_ranks_equal_one(0.3, 2); }

// The CPU trainer's accumulation (K = 3: the first step of a group writes, the others add, every third step averages
// and updates) against the float64 reference; float32 vs float64 over 20 steps stays far below 1e-4 relative, while
// updating every step instead (K = 1) would differ by O(1e-2) (checked below, so the comparison can fail).
TEST(CpuAccumulation, MatchesFloat64Reference) {
  TrainingSettings settings = settings_for(0.3, 3);
  settings.warmup_steps = 2;
  settings.measured_steps = 19;  // 21 steps: 7 updates
  CpuTrainer trainer(settings, MPI_COMM_SELF);
  trainer.run(1);
  const std::vector<double> reference = testing_reference::training_run(settings, 1);
  const double error = testing_reference::relative_error(trainer.parameters(), reference);
  std::printf("[ measured ] accumulate 3: CPU trainer vs float64 reference, relative weight error %.3g\n", error);
  EXPECT_LE(error, 1e-4);
  TrainingSettings every_step = settings;
  every_step.accumulate_steps = 1;
  const double other =
      testing_reference::relative_error(trainer.parameters(), testing_reference::training_run(every_step, 1));
  std::printf("[ measured ] accumulate 3 vs 1: relative weight difference %.3g\n", other);
  EXPECT_GT(other, 100 * error);
}

// One rank (MPI_COMM_SELF): nothing to reduce, so no all-reduce is timed, yet every step's update is applied: the
// weights are the float64 reference's after 5 updates, and far from the initial ones.
TEST(CpuOneRank, AppliesEveryUpdateWithoutAnAllReduce) {
  TrainingSettings settings = settings_for(0.0, 1);
  settings.warmup_steps = 1;
  settings.measured_steps = 4;
  CpuTrainer trainer(settings, MPI_COMM_SELF);
  const RunRecord record = trainer.run(2);
  ASSERT_EQ(record.total_steps, 5);
  for (int s = 0; s < record.total_steps; ++s) {
    EXPECT_EQ(record.ms(Phase::allreduce, s), 0.0) << "step " << s;
    EXPECT_EQ(record.ms(Phase::exposed_comm, s), 0.0) << "step " << s;
    EXPECT_GT(record.ms(Phase::optimizer, s), 0.0) << "step " << s;
  }
  const double error =
      testing_reference::relative_error(trainer.parameters(), testing_reference::training_run(settings, 2));
  EXPECT_LE(error, 1e-5);
  TrainingSettings one_step_fewer = settings;
  one_step_fewer.measured_steps = 3;
  EXPECT_GT(testing_reference::relative_error(trainer.parameters(), testing_reference::training_run(one_step_fewer, 2)),
            100 * error);
}

// accumulate_steps 1 and 2 against the float64 reference of the same K, over an odd number of steps (K = 2 leaves
// the last step's gradient accumulated but not applied); the two K differ from each other far beyond that error.
TEST(CpuAccumulation, OneAndTwoStepsMatchTheirReferences) {
  std::vector<float> weights[3];
  double error[3] = {};
  for (int k : {1, 2}) {
    TrainingSettings settings = settings_for(0.0, k);
    settings.warmup_steps = 0;
    settings.measured_steps = 5;
    CpuTrainer trainer(settings, MPI_COMM_SELF);
    const RunRecord record = trainer.run(0);
    weights[k] = trainer.parameters();
    error[k] = testing_reference::relative_error(weights[k], testing_reference::training_run(settings, 0));
    EXPECT_LE(error[k], 1e-5) << "accumulate " << k;
    for (int s = 0; s < record.total_steps; ++s) {
      const bool updates = (s + 1) % k == 0;
      EXPECT_EQ(record.ms(Phase::optimizer, s) > 0.0, updates) << "accumulate " << k << ", step " << s;
    }
  }
  EXPECT_GT(relative_difference(weights[2], weights[1]), 100 * std::max(error[1], error[2]));
}

}  // namespace
}  // namespace mgpu
