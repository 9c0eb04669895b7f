// Purpose: the stopping rule of adaptive trials (trial_stopping.hpp).
#include "study/trial_stopping.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "stats/answer.hpp"

namespace mgpu {

std::vector<stats::RatioInterval> batch_speedups(const std::vector<ConfigurationResults>& configurations) {
  std::vector<stats::ConfigurationStats> measured;
  for (const ConfigurationResults& c : configurations)
    measured.push_back(stats::compute_configuration_stats(c, "", stats::AnalysisOptions{}));
  std::vector<stats::RatioInterval> speedups;
  for (const stats::PairAnswer& pair : stats::compute_answer(measured).pairs) speedups.push_back(pair.pair.speedup);
  return speedups;
}

std::string TrialStopping::stop_reason(int trials, const std::vector<stats::RatioInterval>& speedups,
                                       double seconds_of_trials) const {
  if (trials < kMinAutoTrials) return "";
  char text[200];
  if (speedups.empty()) return "no N-GPU configuration whose speedup more trials would narrow";
  // The widest relative half-width of the speedups' trial intervals (infinity where one has none).
  double widest_percent = 0;
  for (const stats::RatioInterval& speedup : speedups) {
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
