// Purpose: compute_answer and answer_lines (answer.hpp).
#include "stats/answer.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "config/settings_table.hpp"
#include "stats/pairing_identity.hpp"
#include "stats/speedup_verdict.hpp"
#include "stats/verdict.hpp"

namespace mgpu::stats {
namespace {

std::string formatted(const char* format, double a, double b = 0) {
  char text[64];
  std::snprintf(text, sizeof text, format, a, b);
  return text;
}

std::string model_name(const ConfigurationResults& c) {
  const MlpSpec& model = c.metadata.training().model;
  return model.name == "custom" ? model.widths_string() : model.name;
}

// "large on 2 GPUs" plus the settings the label adds to the configuration's name ("nccl tree/simple", ...).
std::string curve_name(const ConfigurationStats& multi) {
  const std::string& name = multi.results->metadata.name;
  const std::string settings = multi.label.substr(std::min(multi.label.size(), name.size()));
  return model_name(*multi.results) + " on " + std::to_string(multi.results->ranks()) + " GPUs" + settings;
}

// The compared identity without the global batch: one speedup-versus-batch curve.
std::vector<std::string> curve_key(const ConfigurationResults& multi) {
  return identity_key(multi, without_global_batch(comparison_identity_attributes()));
}

// The step settings decided per batch (config/settings_table.hpp: --overlap auto and --fuse-optimizer auto decide
// them per local batch, and what exists only with overlap on): one default job's batch sweep changes them along the
// way (overlap from a local batch of 1024 on 4 GPUs), so a curve that split on them would end where the setting flips
// and miss the break-even beyond it.
std::vector<std::string> curve_key_across_batches(const ConfigurationResults& multi) {
  std::vector<IdentityAttribute> kept;
  for (const IdentityAttribute& a : without_global_batch(comparison_identity_attributes()))
    if (!decided_per_batch(a.name)) kept.push_back(a);
  return identity_key(multi, kept);
}

// A curve name without the settings decided per batch: "medium on 4 GPUs overlap=on bucket_mb=8" -> "medium on 4
// GPUs".
std::string without_per_batch_settings(const std::string& curve) {
  std::string kept;
  std::size_t start = 0;
  while (start <= curve.size()) {
    const std::size_t end = std::min(curve.find(' ', start), curve.size());
    const std::string word = curve.substr(start, end - start);
    const std::size_t equals = word.find('=');
    if (equals == std::string::npos || !decided_per_batch(word.substr(0, equals)))
      kept += (kept.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return kept;
}

// Each pair's curve: pairs that differ only in settings decided per batch form one curve, unless two of them share a
// global batch (a file that compares those settings by hand), where each setting keeps a curve of its own. Sets
// PairAnswer::curve and returns each pair's curve key.
std::vector<std::vector<std::string>> assign_curves(std::vector<PairAnswer>& pairs) {
  std::vector<std::vector<std::string>> keys;  // each pair's key across batches, then its curve's key
  std::map<std::vector<std::string>, std::map<long long, std::size_t>> batches_across;  // key -> batch -> pairs
  for (const PairAnswer& a : pairs) {
    keys.push_back(curve_key_across_batches(*a.pair.multi().results));
    ++batches_across[keys.back()][a.global_batch];
  }
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& batches = batches_across.at(keys[i]);
    const bool merged = std::all_of(batches.begin(), batches.end(), [](const auto& b) { return b.second == 1; });
    if (merged)
      pairs[i].curve = without_per_batch_settings(pairs[i].curve);
    else
      keys[i] = curve_key(*pairs[i].pair.multi().results);
  }
  return keys;
}

std::string interval_text(const RatioInterval& r) {
  return r.has_interval ? formatted(" [%.3f, %.3f]", r.low, r.high) : std::string(" (no interval)");
}

// Where the file holds the 1-GPU configuration at the local batch: the speedup's ceiling and the share of it reached,
// ", ceiling 1.804 [1.798, 1.810], reached 91.5% [91.1%, 91.9%]".
std::string ceiling_text(const ScalingPair& p) {
  if (!p.has_ceiling()) return "";
  const RatioInterval& f = p.ceiling_fraction;
  return ", ceiling " + formatted("%.3f", p.ceiling.ratio) + interval_text(p.ceiling) + ", reached " +
         formatted("%.1f%%", 100 * f.ratio) +
         (f.has_interval ? formatted(" [%.1f%%, %.1f%%]", 100 * f.low, 100 * f.high) : std::string(" (no interval)"));
}

// A pair measured once: its figures over the kept runs.
std::string run_figures(const PairAnswer& a) {
  const ScalingPair& p = a.pair;
  std::string figures = a.model + ", global batch " + std::to_string(a.global_batch) + ", " + std::to_string(a.gpus) +
                        " GPUs: speedup " + formatted("%.3f", p.speedup.ratio) + interval_text(p.speedup) +
                        ", efficiency " + formatted("%.1f%%", 100.0 * p.efficiency) + ceiling_text(p);
  figures += p.welch.valid ? ", Welch p " + formatted("%.3g", p.welch.p) : std::string(", Welch p -");
  return figures + " (kept runs " + std::to_string(p.multi().runs_kept) + "/" + std::to_string(p.multi().runs_total) +
         " on " + std::to_string(a.gpus) + ", " + std::to_string(p.single().runs_kept) + "/" +
         std::to_string(p.single().runs_total) + " on 1)";
}

// A pair measured in trials: its figures over the trial means, with both variance components.
std::string trial_figures(const PairAnswer& a) {
  const ScalingPair& p = a.pair;
  const VarianceComponents& one = p.single_components;
  const VarianceComponents& many = p.multi_components;
  return a.model + ", global batch " + std::to_string(a.global_batch) + ", " + std::to_string(a.gpus) + " GPUs, " +
         std::to_string(p.trials()) + " trials: speedup " + formatted("%.3f", p.speedup.ratio) +
         interval_text(p.speedup) + " over the trial means, efficiency " + formatted("%.1f%%", 100.0 * p.efficiency) +
         ceiling_text(p) + "; sd between trials " + formatted("%.2f%%", one.between_sd_percent()) + " on 1, " +
         formatted("%.2f%%", many.between_sd_percent()) + " on " + std::to_string(a.gpus) + " (within a trial " +
         formatted("%.2f%%", one.within_sd_percent()) + ", " + formatted("%.2f%%", many.within_sd_percent()) + ")";
}

PairAnswer answer_of(const ScalingPair& pair) {
  PairAnswer a;
  a.pair = pair;
  a.model = model_name(*pair.multi().results);
  a.global_batch = pair.multi().results->metadata.global_batch();
  a.gpus = pair.gpus();
  a.curve = curve_name(pair.multi());
  // With trials the trial means decide, and two or more of them always give an interval unless the 1-GPU means are too
  // noisy; measured once, the fewer kept runs of the two sides say why an interval is missing.
  const int fewest_kept = pair.in_trials() ? static_cast<int>(kMinimumRunsForInterval)
                                           : std::min(pair.single().runs_kept, pair.multi().runs_kept);
  a.figures = pair.in_trials() ? trial_figures(a) : run_figures(a);
  if (!pair.speedup.has_interval) a.missing_interval = missing_interval_reason(fewest_kept);
  a.sentence = speedup_sentence(a.gpus, pair.speedup, fewest_kept) +
               more_trials_note(pair.speedup, static_cast<int>(pair.trials()));
  // The conclusion follows the sentence's last ": " (speedup_sentence; no conclusion holds one).
  a.conclusion = a.sentence.substr(a.sentence.rfind(": ") + 2);
  return a;
}

std::vector<BreakEvenAnswer> break_evens_of(const std::vector<PairAnswer>& pairs,
                                            const std::vector<std::vector<std::string>>& curve_keys) {
  std::vector<BreakEvenAnswer> curves;
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const PairAnswer& a = pairs[i];
    const auto [at, added] = index.emplace(curve_keys[i], curves.size());
    if (added) curves.push_back({a.curve, a.model, a.gpus});
    const RatioInterval& r = a.pair.speedup;
    curves[at->second].points.push_back({a.global_batch, r.ratio, r.has_interval, r.low, r.high, a.missing_interval});
  }
  std::vector<BreakEvenAnswer> swept;
  for (BreakEvenAnswer& curve : curves) {
    if (curve.points.size() < 2) continue;  // a break-even needs a batch sweep
    curve.break_even = estimate_break_even(curve.points);
    curve.points = curve.break_even.points;  // by global batch
    curve.sentence = describe_break_even(curve.break_even);
    swept.push_back(std::move(curve));
  }
  return swept;
}

}  // namespace

bool Answer::any_trials() const {
  return std::any_of(pairs.begin(), pairs.end(), [](const PairAnswer& a) { return a.pair.in_trials(); });
}

Answer compute_answer(const std::vector<ConfigurationStats>& configurations) {
  Answer answer;
  answer.scaling = build_scaling_table(configurations);
  for (const ScalingPair& pair : answer.scaling.pairs) answer.pairs.push_back(answer_of(pair));
  const std::vector<std::vector<std::string>> curve_keys = assign_curves(answer.pairs);
  answer.break_evens = break_evens_of(answer.pairs, curve_keys);
  return answer;
}

std::vector<std::string> answer_lines(const Answer& answer, const std::string& file_path) {
  std::vector<std::string> lines;
  lines.push_back(
      "verdict (mgpu_analyze's statistics: speedup = mean throughput(N) / mean throughput(1) over kept runs, "
      "Fieller 95% interval, Welch's two-sided test" +
      std::string(answer.any_trials() ? "; a pair measured in trials: Fieller over its trial means" : "") + "):");
  for (const ConfigurationStats* c : answer.scaling.wrong_steps)
    lines.push_back("  not paired: " + c->results->metadata.name + ": " + c->wrong_step());
  if (answer.pairs.empty()) {
    lines.push_back("  no N-GPU configuration with its 1-GPU baseline in " + file_path +
                    " (an explicit --gpus without 1 measures no baseline)");
    return lines;
  }
  for (const PairAnswer& a : answer.pairs)
    for (const std::string& line : pair_lines(a)) lines.push_back(line);
  for (const BreakEvenAnswer& curve : answer.break_evens) lines.push_back(break_even_line(curve));
  return lines;
}

std::vector<std::string> pair_lines(const PairAnswer& a) { return {"  " + a.figures, "    " + a.sentence}; }

std::string break_even_line(const BreakEvenAnswer& curve) {
  return "  break-even, " + curve.curve + ": " + curve.sentence;
}

}  // namespace mgpu::stats
