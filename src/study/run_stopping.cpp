// Purpose: the stopping rule of a configuration's runs (run_stopping.hpp).
#include "study/run_stopping.hpp"

#include <cmath>
#include <cstdio>

#include "stats/run_kinds.hpp"
#include "stats/statistics.hpp"

namespace mgpu {

std::string stop_reason(const StopRule& rule, const std::vector<RunSummary>& runs, double seconds_of_runs) {
  std::vector<bool> marks;
  for (const RunSummary& run : runs) marks.push_back(run.phases_marked);
  const stats::RunKinds kinds = stats::run_kinds(marks);
  std::vector<double> all_throughput;
  for (const int run : kinds.throughput)
    all_throughput.push_back(runs[static_cast<std::size_t>(run)].samples_per_second);
  // The runs the answer keeps (its outlier screen at the default threshold): a stop with fewer than an interval needs
  // would leave the speedup without one.
  const std::vector<bool> kept = stats::outlier_free(all_throughput);
  std::vector<double> throughput;
  for (std::size_t i = 0; i < all_throughput.size(); ++i)
    if (kept[i]) throughput.push_back(all_throughput[i]);
  // Interleaved, a configuration needs a marked run (its phases) before it may stop.
  if (throughput.size() < stats::kMinimumRunsForInterval || (rule.interleaved && !kinds.split())) return "";
  char text[160];
  const stats::SampleSummary summary = stats::summarize_sample(throughput);
  const double half_width_percent = summary.mean > 0 ? 100 * summary.half_width / summary.mean : INFINITY;
  const double within_percent = rule.max_noise_percent / std::sqrt(2.0);
  if (rule.max_noise_percent > 0 && static_cast<int>(throughput.size()) >= kMinimumRunsBeforeNoiseStop &&
      half_width_percent <= within_percent) {
    std::snprintf(text, sizeof text,
                  "noise: the throughput's 95%% half-width %.2g%% is within %.2g%% (--max-noise %g%%)",
                  half_width_percent, within_percent, rule.max_noise_percent);
    return text;
  }
  if (rule.max_time_seconds > 0 && seconds_of_runs >= rule.max_time_seconds) {
    std::snprintf(text, sizeof text, "time: %.1f s of runs, --max-time %g s", seconds_of_runs, rule.max_time_seconds);
    return text;
  }
  return "";
}

}  // namespace mgpu
