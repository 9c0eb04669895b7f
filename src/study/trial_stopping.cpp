// Purpose: the stopping rule of adaptive trials (trial_stopping.hpp).
#include "study/trial_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "stats/trial_interval.hpp"

namespace mgpu {

double trial_throughput(const std::vector<RunSummary>& runs) {
  const bool some_unmarked =
      std::any_of(runs.begin(), runs.end(), [](const RunSummary& run) { return !run.phases_marked; });
  const bool some_marked =
      std::any_of(runs.begin(), runs.end(), [](const RunSummary& run) { return run.phases_marked; });
  double sum = 0;
  int count = 0;
  for (const RunSummary& run : runs) {
    if (some_unmarked && some_marked && run.phases_marked) continue;
    sum += run.samples_per_second;
    ++count;
  }
  return count > 0 ? sum / count : 0.0;
}

void TrialStopping::add(int gpus, double throughput) { throughput_[gpus].push_back(throughput); }

int TrialStopping::trials() const {
  const auto single = throughput_.find(1);
  return single == throughput_.end() ? 0 : static_cast<int>(single->second.size());
}

std::string TrialStopping::stop_reason(double seconds_of_trials) const {
  const int trials = this->trials();
  if (trials < kMinAutoTrials) return "";
  char text[200];
  if (throughput_.size() < 2) return "no N-GPU configuration whose speedup more trials would narrow";
  // The widest relative half-width of the speedups' trial intervals (infinity where one has none).
  double widest_percent = 0;
  const auto single = throughput_.find(1);
  for (const auto& [gpus, means] : throughput_) {
    if (gpus == 1) continue;
    const std::size_t paired = std::min(means.size(), single->second.size());
    const std::vector<double> multi(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(paired));
    const std::vector<double> one(single->second.begin(), single->second.begin() + static_cast<std::ptrdiff_t>(paired));
    const stats::RatioInterval speedup = stats::paired_trial_ratio_interval(multi, one);
    const double percent = speedup.has_interval && speedup.ratio > 0
                               ? 100 * (speedup.high - speedup.low) / 2 / speedup.ratio
                               : std::numeric_limits<double>::infinity();
    widest_percent = std::max(widest_percent, percent);
  }
  if (max_noise_percent_ > 0 && widest_percent <= max_noise_percent_) {
    std::snprintf(text, sizeof text, "noise: every speedup's trial interval within %.2g%% of it (--max-noise %g%%)",
                  widest_percent, max_noise_percent_);
    return text;
  }
  if (max_time_seconds_ > 0 && seconds_of_trials >= max_time_seconds_) {
    std::snprintf(text, sizeof text, "time: %.1f s of trials, --max-time %g s", seconds_of_trials, max_time_seconds_);
    return text;
  }
  if (trials >= kMaxAutoTrials) return "the most trials --trials auto measures";
  return "";
}

}  // namespace mgpu
