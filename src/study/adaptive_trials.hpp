// Purpose: --trials auto: after each trial of a batch, whether the batch measures another (trial_stopping.hpp): rank 0
// decides from the answer over the batch's configurations as the results file holds them, every rank learns, and a
// stopped batch's later trials are left out of the job.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"
#include "study/sweep_plan.hpp"
#include "study/trial_stopping.hpp"

namespace mgpu {

class AdaptiveTrials {
 public:
  // `results_path`: the job's results file, which rank 0 writes and flushes after every run; `device`: the back-end's
  // name in the configurations' names.
  AdaptiveTrials(const BenchOptions& options, const std::vector<Configuration>& plan, std::string results_path,
                 std::string device);

  // Plan entry i is a later trial of a batch that has enough.
  bool left_out(std::size_t i) const;
  // Before plan entry i runs.
  void starting(std::size_t i);
  // After plan entry i ran; collective over `mpi` at the end of a trial.
  void finished(std::size_t i, const MpiContext& mpi);

 private:
  // Rank 0: the batch's configurations measured so far, as the results file holds them.
  std::vector<ConfigurationResults> batch_so_far(std::size_t last) const;

  bool enabled_;
  const std::vector<Configuration>& plan_;
  std::string results_path_;
  std::string device_;
  TrialStopping stopping_;
  // Test-only fault hook (docs/reliability.md): MGPU_FAULT_STEADY_TRIALS=1 makes every trial of a configuration
  // count its batch's first trial's runs, so that the noise rule sees no spread whatever the host's timing noise.
  bool steady_trials_;
  std::size_t batch_start_ = 0;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
};

}  // namespace mgpu
