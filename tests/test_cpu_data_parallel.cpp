// Purpose: data parallelism is exact: 2 ranks (MPI_Allreduce average) end with the weights 1 rank gets on the same
// global batches. Runs under `mpiexec -n 2`.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

#include "cpu_trainer.hpp"

namespace mgpu {
namespace {

TrainingSettings settings_for(double dropout) {
  TrainingSettings settings;
  settings.model = custom_model({40, 32, 16, 3}, dropout);
  settings.global_batch = 8;
  settings.warmup_steps = 0;
  settings.measured_steps = 20;
  settings.seed = 42;
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

void expect_two_ranks_equal_one(double dropout) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world != 2) GTEST_SKIP() << "needs exactly 2 ranks (mpiexec -n 2), got " << world;
  CpuTrainer distributed(settings_for(dropout), MPI_COMM_WORLD);
  CpuTrainer alone(settings_for(dropout), MPI_COMM_SELF);
  const RunRecord distributed_record = distributed.run(3);
  const RunRecord alone_record = alone.run(3);
  const double difference = relative_difference(distributed.parameters(), alone.parameters());
  std::printf("[ measured ] dropout %.1f: 2-rank vs 1-rank relative weight difference after 20 steps: %.3g\n",
              dropout, difference);
  EXPECT_LE(difference, 1e-5);
  // The training actually moved the weights and the loss fell.
  EXPECT_LT(alone_record.loss.back(), alone_record.loss.front());
  // Each rank's loss is over its half; their mean is the 1-rank loss of the same step.
  double mean_first_loss = 0;
  double mine = distributed_record.loss.front();
  MPI_Allreduce(&mine, &mean_first_loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_NEAR(mean_first_loss / 2, alone_record.loss.front(), 1e-6 * alone_record.loss.front());
  // Timings were recorded for every step, and the all-reduce happened only with 2 ranks.
  for (int s = 0; s < distributed_record.total_steps; ++s) {
    EXPECT_GT(distributed_record.ms(Phase::step, s), 0.0);
    EXPECT_GT(distributed_record.ms(Phase::allreduce, s), 0.0);
    EXPECT_EQ(alone_record.ms(Phase::allreduce, s), 0.0);
    EXPECT_GE(distributed_record.ms(Phase::step, s) + 1e-9,
              distributed_record.ms(Phase::forward, s) + distributed_record.ms(Phase::backward, s));
  }
}

TEST(CpuDataParallel, TwoRanksGiveOneRanksWeightsWithoutDropout) { expect_two_ranks_equal_one(0.0); }
// Dropout masks are keyed by global sample index, so even with dropout the two runs are the same computation.
TEST(CpuDataParallel, TwoRanksGiveOneRanksWeightsWithDropout) { expect_two_ranks_equal_one(0.3); }

}  // namespace
}  // namespace mgpu
