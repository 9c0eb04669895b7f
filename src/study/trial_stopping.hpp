// Purpose: when a batch measured in adaptive trials (--trials auto) has enough trials (docs/statistics.md, "Trials"):
// from its kMinAutoTrials-th trial on, once the trial interval of every N-over-1 speedup of the batch is within
// --max-noise, or once its trials have taken --max-time; at most kMaxAutoTrials (cli/options.hpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "study/run_summary.hpp"

namespace mgpu {

// The mean throughput of a configuration's runs: the unmarked ones where there are marked ones too (--timing
// interleaved), as the throughput is computed; 0 without runs.
double trial_throughput(const std::vector<RunSummary>& runs);

class TrialStopping {
 public:
  TrialStopping(double max_noise_percent, double max_time_seconds)
      : max_noise_percent_(max_noise_percent), max_time_seconds_(max_time_seconds) {}

  // A configuration of the batch (on `gpus` GPUs) finished its trial, measuring `throughput` (trial_throughput).
  // Trials are added in order, every GPU count of trial k before trial k + 1.
  void add(int gpus, double throughput);
  // After every configuration of a trial was added: "" while the batch should measure another trial; else why it
  // stops, e.g. "noise: every speedup's trial interval within 0.8% of it (--max-noise 1%)",
  // "time: 61.2 s of trials, --max-time 60 s", or "the most trials --trials auto measures".
  std::string stop_reason(double seconds_of_trials) const;
  int trials() const;  // complete trials so far: the 1-GPU configuration's count

 private:
  double max_noise_percent_;
  double max_time_seconds_;
  std::map<int, std::vector<double>> throughput_;  // GPU count -> one value per trial
};

}  // namespace mgpu
