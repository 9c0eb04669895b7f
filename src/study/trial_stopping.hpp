// Purpose: when a batch measured in adaptive trials (--trials auto) has enough trials (docs/statistics.md, "Trials"):
// from its kMinAutoTrials-th trial on, once the answer's trial interval of every N-over-1 speedup of the batch is
// within --max-noise, or once its trials have taken --max-time; at most kMaxAutoTrials (cli/options.hpp). The
// intervals are the answer's own (stats::compute_answer over the batch's configurations as the results file holds
// them, outliers screened): the interval the rule stops on is the one the verdict prints.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "results/results_reader.hpp"
#include "stats/speedup_interval.hpp"

namespace mgpu {

class TrialStopping {
 public:
  TrialStopping(double max_noise_percent, double max_time_seconds)
      : max_noise_percent_(max_noise_percent), max_time_seconds_(max_time_seconds) {}

  // After `trials` complete trials of the batch whose N-GPU speedups are `speedups` (batch_speedups): "" while the
  // batch should measure another trial; else why it stops, e.g. "noise: every speedup's trial interval within 0.8% of
  // it (--max-noise 1%)", "time: 61.2 s of trials, --max-time 60 s", or "the most trials --trials auto measures".
  std::string stop_reason(int trials, const std::vector<stats::RatioInterval>& speedups,
                          double seconds_of_trials) const;

 private:
  double max_noise_percent_;
  double max_time_seconds_;
};

// The speedup of every pair of the answer (stats::compute_answer) over `configurations`: one batch's trials so far,
// each with at least one completed run.
std::vector<stats::RatioInterval> batch_speedups(const std::vector<ConfigurationResults>& configurations);

}  // namespace mgpu
