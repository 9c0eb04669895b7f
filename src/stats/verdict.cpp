// Purpose: the verdict's sentence and lines (verdict.hpp).
#include "stats/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "stats/break_even.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/pairing_identity.hpp"
#include "stats/scaling.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {
namespace {

std::string formatted(const char* format, double a, double b = 0, double c = 0) {
  char text[64];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

// The preset's name, or the widths of a custom MLP ("50-256-3").
std::string model_name(const ConfigurationResults& c) {
  if (c.metadata.model != "custom") return c.metadata.model;
  std::string widths;
  for (const std::int32_t w : c.metadata.layer_widths) widths += (widths.empty() ? "" : "-") + std::to_string(w);
  return widths;
}

// The scaling identity without the global batch, plus the GPU count: one speedup-versus-batch curve.
std::vector<std::string> curve_key(const ConfigurationResults& multi) {
  std::vector<IdentityAttribute> attributes;
  for (const IdentityAttribute& a : scaling_identity_attributes())
    if (std::strcmp(a.name, "global_batch") != 0) attributes.push_back(a);
  std::vector<std::string> key = identity_key(multi, attributes);
  key.push_back(std::to_string(multi.ranks()));
  return key;
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
  if (speedup.high < 1 - kMinimumEffect) return head + interval + ": " + adding + " slows this step down";
  if (speedup.low > 1 + kMinimumEffect) return head + interval + ": " + adding + " speeds this step up";
  if (speedup.low <= 1 && 1 <= speedup.high)
    return head + interval + ": no significant difference from 1 GPU (the 95% interval contains 1)";
  return head + interval + ": no clear difference from 1 GPU (the 95% interval excludes 1, not the " +
         formatted("%.0f%%", 100 * kMinimumEffect) + " either side of it)";
}

std::string more_trials_note(const RatioInterval& speedup, int trials) {
  if (!speedup.has_interval || trials < 2) return "";
  if (speedup.high < 1 - kMinimumEffect || speedup.low > 1 + kMinimumEffect) return "";
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

namespace {

// The two lines of a pair measured once: its figures over the kept runs, and the sentence.
std::vector<std::string> pair_lines(const ScalingPair& pair) {
  const ConfigurationResults& multi = *pair.multi->results;
  const int gpus = multi.ranks();
  const int fewest_kept = std::min(pair.single->runs_kept, pair.multi->runs_kept);
  std::string figures = "  " + model_name(multi) + ", global batch " + std::to_string(multi.metadata.global_batch) +
                        ", " + std::to_string(gpus) + " GPUs: speedup " + formatted("%.3f", pair.speedup.ratio);
  figures += pair.speedup.has_interval ? formatted(" [%.3f, %.3f]", pair.speedup.low, pair.speedup.high)
                                       : std::string(" (no interval)");
  figures += ", efficiency " + formatted("%.1f%%", 100.0 * pair.efficiency);
  figures += pair.welch.valid ? ", Welch p " + formatted("%.3g", pair.welch.p) : std::string(", Welch p -");
  figures += " (kept runs " + std::to_string(pair.multi->runs_kept) + "/" + std::to_string(pair.multi->runs_total) +
             " on " + std::to_string(gpus) + ", " + std::to_string(pair.single->runs_kept) + "/" +
             std::to_string(pair.single->runs_total) + " on 1)";
  return {figures, "    " + speedup_sentence(gpus, pair.speedup, fewest_kept)};
}

// The two lines of a pair measured in trials: its figures over the trial means with both variance components, and
// the sentence with what more trials would do.
std::vector<std::string> trial_pair_lines(const TrialScalingPair& trials) {
  const ConfigurationResults& multi = *trials.multis.front()->results;
  const int gpus = multi.ranks();
  const VarianceComponents& one = trials.single_components;
  const VarianceComponents& many = trials.multi_components;
  std::string figures = "  " + model_name(multi) + ", global batch " + std::to_string(multi.metadata.global_batch) +
                        ", " + std::to_string(gpus) + " GPUs, " + std::to_string(trials.multis.size()) +
                        " trials: speedup " + formatted("%.3f", trials.speedup.ratio);
  figures += trials.speedup.has_interval ? formatted(" [%.3f, %.3f]", trials.speedup.low, trials.speedup.high)
                                         : std::string(" (no interval)");
  figures += " over the trial means, efficiency " + formatted("%.1f%%", 100.0 * trials.speedup.ratio / gpus);
  figures += "; sd between trials " + formatted("%.2f%%", one.between_sd_percent()) + " on 1, " +
             formatted("%.2f%%", many.between_sd_percent()) + " on " + std::to_string(gpus) + " (within a trial " +
             formatted("%.2f%%", one.within_sd_percent()) + ", " + formatted("%.2f%%", many.within_sd_percent()) + ")";
  // Two or more trials always give the sentence an interval unless the 1-GPU means are too noisy.
  return {figures, "    " + speedup_sentence(gpus, trials.speedup, static_cast<int>(kMinimumRunsForInterval)) +
                       more_trials_note(trials.speedup, static_cast<int>(trials.multis.size()))};
}

// The speedups of a model and GPU count over its batches, for its break-even line.
struct SpeedupCurves {
  std::map<std::vector<std::string>, std::vector<SpeedupPoint>> points;
  std::map<std::vector<std::string>, std::string> names;

  void add(const ConfigurationResults& multi, const RatioInterval& speedup) {
    SpeedupPoint point;
    point.global_batch = multi.metadata.global_batch;
    point.speedup = speedup.ratio;
    point.has_interval = speedup.has_interval;
    point.low = speedup.low;
    point.high = speedup.high;
    const std::vector<std::string> key = curve_key(multi);
    points[key].push_back(point);
    names[key] = model_name(multi) + " on " + std::to_string(multi.ranks()) + " GPUs";
  }
  void add_break_even_lines(std::vector<std::string>& lines) const {
    for (const auto& [key, curve] : points) {
      if (curve.size() < 2) continue;  // a break-even needs a batch sweep
      const BreakEven break_even = find_break_even(curve);
      std::string line = "  break-even, " + names.at(key) + ": " + describe_break_even(break_even);
      if (break_even.smallest_significant)
        line += "; significantly faster than 1 GPU from global batch " +
                std::to_string(break_even.smallest_significant->global_batch);
      lines.push_back(line);
    }
  }
};

}  // namespace

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
  const ScalingTable table = build_scaling_table(configurations);
  // A pair measured in several trials (--trials, or several jobs' files) is judged by its trial means alone.
  const std::vector<TrialScalingPair> trial_pairs = build_trial_scaling(configurations);
  std::vector<std::string> lines;
  lines.push_back(
      "verdict (mgpu_analyze's statistics: speedup = mean throughput(N) / mean throughput(1) over kept runs, "
      "Fieller 95% interval, Welch's two-sided test" +
      std::string(trial_pairs.empty() ? "" : "; a pair measured in trials: Fieller over its trial means") + "):");
  for (const ConfigurationStats* c : table.wrong_steps)
    lines.push_back("  not paired: " + c->results->metadata.name + ": " + c->wrong_step());
  if (table.pairs.empty()) {
    lines.push_back("  no N-GPU configuration with its 1-GPU baseline in " + file.path +
                    " (an explicit --gpus without 1 measures no baseline)");
    return lines;
  }
  SpeedupCurves curves;
  std::set<const ConfigurationStats*> in_trials;
  for (const TrialScalingPair& trials : trial_pairs) in_trials.insert(trials.multis.begin(), trials.multis.end());
  for (const ScalingPair& pair : table.pairs) {
    if (in_trials.count(pair.multi) != 0) continue;
    for (std::string& line : pair_lines(pair)) lines.push_back(std::move(line));
    curves.add(*pair.multi->results, pair.speedup);
  }
  for (const TrialScalingPair& trials : trial_pairs) {
    for (std::string& line : trial_pair_lines(trials)) lines.push_back(std::move(line));
    curves.add(*trials.multis.front()->results, trials.speedup);
  }
  curves.add_break_even_lines(lines);
  return lines;
}

}  // namespace mgpu::stats
