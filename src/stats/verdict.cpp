// Purpose: the verdict's sentence and lines (verdict.hpp).
#include "stats/verdict.hpp"

#include <cmath>
#include <cstdio>

#include "stats/answer.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/speedup_verdict.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {
namespace {

std::string formatted(const char* format, double a, double b = 0, double c = 0) {
  char text[64];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

}  // namespace

std::string speedup_sentence(int gpus, const RatioInterval& speedup, int fewest_kept_runs) {
  const std::string head = std::to_string(gpus) + " GPUs are " + formatted("%.2fx", speedup.ratio) + " as fast as 1";
  const std::string adding = gpus == 2 ? "adding a GPU" : "adding GPUs";
  const std::string interval = formatted(" [%.2f, %.2f]", speedup.low, speedup.high);
  const SpeedupVerdict verdict = speedup_verdict(speedup.has_interval, speedup.low, speedup.high);
  switch (verdict) {
    case SpeedupVerdict::no_interval:
      return head +
             (fewest_kept_runs < static_cast<int>(kMinimumRunsForInterval)
                  ? " (no interval: fewer than " + std::to_string(kMinimumRunsForInterval) + " kept runs): "
                  : std::string(" (no bounded interval: the 1-GPU throughput is too noisy): ")) +
             speedup_verdict_words(verdict, missing_interval_reason(fewest_kept_runs));
    case SpeedupVerdict::slower:
      return head + interval + ": " + adding + " slows this step down";
    case SpeedupVerdict::faster:
      return head + interval + ": " + adding + " speeds this step up";
    case SpeedupVerdict::no_significant_difference:
      return head + interval + ": " + speedup_verdict_words(verdict, "") + " from 1 GPU (the 95% interval contains 1)";
    case SpeedupVerdict::no_clear_difference:
      break;
  }
  return head + interval + ": " + speedup_verdict_words(verdict, "") +
         " from 1 GPU (the 95% interval excludes 1, not the " + percent_text(kMinimumEffect) + " either side of it)";
}

std::string more_trials_note(const RatioInterval& speedup, int trials) {
  if (trials < 2 || !is_no_difference(speedup_verdict(speedup.has_interval, speedup.low, speedup.high))) return "";
  // The half-width the interval needs: from the speedup to the near edge of the band 1 +- kMinimumEffect.
  const double needed = std::abs(speedup.ratio - 1) - kMinimumEffect;
  if (needed <= 0)
    return "; more trials would narrow the interval around a speedup within " + percent_text(kMinimumEffect) + " of 1";
  const auto width_per = [](int t) { return student_t_quantile(0.975, t - 1) / std::sqrt(static_cast<double>(t)); };
  // The half-width per unit of t(0.975, T - 1) / sqrt(T), as the trials measured it.
  const double spread = (speedup.high - speedup.low) / 2 / width_per(trials);
  constexpr int kMostTrials = 1000;
  for (int more = trials + 1; more <= kMostTrials; ++more) {
    if (spread * width_per(more) <= needed)
      return "; about " + std::to_string(more) + " trials in all would tell faster or slower by more than " +
             percent_text(kMinimumEffect);
  }
  return "; more than 1000 trials would be needed to tell faster or slower";
}

std::vector<std::string> verdict_lines(const ResultsFile& file, int job_ranks) {
  if (job_ranks < 2)
    return {
        "verdict: needs >= 2 ranks, this job has 1 (start it with mpiexec -n N, N > 1, to measure N GPUs "
        "against 1)"};
  std::vector<ConfigurationStats> configurations;
  for (const ConfigurationResults& c : file.configurations) {
    if (c.runs() < 1) continue;  // nothing measured (an interrupted configuration)
    configurations.push_back(compute_configuration_stats(c, file.path, {}));
  }
  return answer_lines(compute_answer(configurations), file.path);
}

}  // namespace mgpu::stats
