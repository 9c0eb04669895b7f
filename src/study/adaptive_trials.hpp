// Purpose: --trials auto: after each trial of a batch, whether the batch measures another (trial_stopping.hpp); rank 0
// decides and every rank learns, and a stopped batch's later trials are left out of the job.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <vector>

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"
#include "study/run_summary.hpp"
#include "study/sweep_plan.hpp"
#include "study/trial_stopping.hpp"

namespace mgpu {

class AdaptiveTrials {
 public:
  AdaptiveTrials(const BenchOptions& options, const std::vector<Configuration>& plan);

  // Plan entry i is a later trial of a batch that has enough.
  bool left_out(std::size_t i) const;
  // Before plan entry i runs.
  void starting(std::size_t i);
  // After plan entry i ran, measuring `runs` (rank 0's summaries); collective over `mpi` at the end of a trial.
  void finished(std::size_t i, const std::vector<RunSummary>& runs, const MpiContext& mpi);

 private:
  bool enabled_;
  const std::vector<Configuration>& plan_;
  double max_noise_percent_;
  double max_time_seconds_;
  TrialStopping stopping_;
  // Test-only fault hook (docs/reliability.md): MGPU_FAULT_STEADY_TRIALS=1 makes every trial of a configuration count
  // its batch's first trial's throughput, so that the noise rule sees no spread whatever the host's timing noise.
  bool steady_trials_;
  std::map<int, double> first_throughput_;  // by GPU count, this batch's
  std::size_t batch_start_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
};

}  // namespace mgpu
