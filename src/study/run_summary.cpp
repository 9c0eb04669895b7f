// Purpose: max-over-ranks step times, throughput and mean phase times of one run.
#include "study/run_summary.hpp"

#include <algorithm>

#include "platform/error.hpp"

namespace mgpu {

RunSummary summarize_run(const std::vector<RunRecord>& per_rank, int warmup_steps, int global_batch) {
  MGPU_REQUIRE(!per_rank.empty(), "a run needs at least one rank's record");
  const int total_steps = per_rank.front().total_steps;
  const int measured_steps = total_steps - warmup_steps;
  MGPU_REQUIRE(measured_steps > 0, "a run needs measured steps");
  RunSummary summary;
  for (int p = 0; p < kPhaseCount; ++p) {
    double sum_of_max = 0;
    for (int step = warmup_steps; step < total_steps; ++step) {
      double slowest = 0;
      for (const RunRecord& rank : per_rank) slowest = std::max(slowest, rank.ms(Phase(p), step));
      sum_of_max += slowest;
    }
    summary.mean_ms[p] = sum_of_max / measured_steps;
    if (Phase(p) == Phase::step) {
      summary.mean_step_ms = summary.mean_ms[p];
      summary.samples_per_second = sum_of_max > 0 ? double(global_batch) * measured_steps / (sum_of_max / 1e3) : 0;
    }
  }
  summary.final_loss = mean_loss_over_ranks(per_rank).back();
  summary.phases_marked = per_rank.front().phases_marked;
  for (const RunRecord& rank : per_rank)
    summary.wall_step_ms = std::max(summary.wall_step_ms, rank.measured_wall_ms / measured_steps);
  return summary;
}

std::vector<double> mean_loss_over_ranks(const std::vector<RunRecord>& per_rank) {
  std::vector<double> mean(per_rank.front().loss.size(), 0.0);
  for (const RunRecord& rank : per_rank)
    for (std::size_t s = 0; s < mean.size(); ++s) mean[s] += rank.loss[s] / double(per_rank.size());
  return mean;
}

}  // namespace mgpu
