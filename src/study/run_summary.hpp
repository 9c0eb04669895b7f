// Purpose: the engine's quick view of one run across ranks (console lines): per docs/measurement.md a distributed step
// takes the maximum over ranks, and throughput = global_batch * measured_steps / sum of measured step times.
// The full statistics (intervals, outliers, tests) belong to the analyzer (mgpu_analyze), which reads the raw data.
#pragma once

#include <array>
#include <vector>

#include "results/run_record.hpp"

namespace mgpu {

struct RunSummary {
  double samples_per_second = 0;
  double mean_step_ms = 0;                    // mean over measured steps of max-over-ranks step time
  std::array<double, kPhaseCount> mean_ms{};  // same for every phase (max over ranks, then mean over steps)
  double final_loss = 0;                      // mean over ranks, last step
  double wall_step_ms = 0;                    // max over ranks of the measured steps' wall span, per measured step
  bool phases_marked = true;  // the run marked every phase (RunRecord::phases_marked); else its phases are NaN
};

// per_rank[r] is rank r's record of the same run; warm-up steps are excluded.
RunSummary summarize_run(const std::vector<RunRecord>& per_rank, int warmup_steps, int global_batch);

// Mean over ranks of each step's loss.
std::vector<double> mean_loss_over_ranks(const std::vector<RunRecord>& per_rank);

}  // namespace mgpu
