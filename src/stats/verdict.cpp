// Purpose: the verdict's sentence and lines (verdict.hpp).
#include "stats/verdict.hpp"

#include <cmath>
#include <cstdio>

#include "stats/answer.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/ratio_judgement.hpp"
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
  if (!speedup.has_interval) {
    if (fewest_kept_runs < static_cast<int>(kMinimumRunsForInterval))
      return head + " (no interval: fewer than " + std::to_string(kMinimumRunsForInterval) +
             " kept runs): too few runs to tell";
    return head + " (no bounded interval: the 1-GPU throughput is too noisy): too noisy to tell";
  }
  const std::string interval = formatted(" [%.2f, %.2f]", speedup.low, speedup.high);
  switch (judge_ratio(speedup)) {
    case RatioJudgement::below:
      return head + interval + ": " + adding + " slows this step down";
    case RatioJudgement::above:
      return head + interval + ": " + adding + " speeds this step up";
    case RatioJudgement::contains_one:
      return head + interval + ": no significant difference from 1 GPU (the 95% interval contains 1)";
    case RatioJudgement::within_band:
    case RatioJudgement::no_interval:  // has an interval here
      break;
  }
  return head + interval + ": no clear difference from 1 GPU (the 95% interval excludes 1, not the " +
         formatted("%.0f%%", 100 * kMinimumEffect) + " either side of it)";
}

std::string more_trials_note(const RatioInterval& speedup, int trials) {
  const RatioJudgement judgement = judge_ratio(speedup);
  if (judgement == RatioJudgement::no_interval || trials < 2) return "";
  if (judgement == RatioJudgement::above || judgement == RatioJudgement::below) return "";
  // The half-width the interval needs: from the speedup to the near edge of the band 1 +- kMinimumEffect.
  const double needed = std::abs(speedup.ratio - 1) - kMinimumEffect;
  if (needed <= 0) return "; more trials would narrow the interval around a speedup within 2% of 1";
  const auto width_per = [](int t) { return student_t_quantile(0.975, t - 1) / std::sqrt(static_cast<double>(t)); };
  // The half-width per unit of t(0.975, T - 1) / sqrt(T), as the trials measured it.
  const double spread = (speedup.high - speedup.low) / 2 / width_per(trials);
  constexpr int kMostTrials = 1000;
  for (int more = trials + 1; more <= kMostTrials; ++more) {
    if (spread * width_per(more) <= needed)
      return "; about " + std::to_string(more) + " trials in all would tell faster or slower by more than 2%";
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
