// Purpose: builds the report's and compare's tables from computed statistics.
#include "report_tables.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "missing_baseline.hpp"
#include "stats/run_checks.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/speedup_verdict.hpp"

namespace mgpu::analysis {
namespace {

Value number(double value) { return value; }
Value integer(long long value) { return static_cast<std::int64_t>(value); }
Value text(std::string value) { return value; }
Value none() { return std::monostate{}; }
// A phase that was not measured (NaN: --timing step or none, or a phase the implementation cannot separate) shows as
// "—", not as "nan".
Value measured(double value) { return std::isnan(value) ? none() : number(value); }

// Columns shared by the tables: where a row's configuration comes from and what it is.
std::vector<Column> identity_columns() {
  return {text_column("file", "file"),
          text_column("configuration", "configuration"),
          text_column("model", "model"),
          {"global_batch", "batch"},
          {"gpus", "GPUs"}};
}
std::vector<Value> identity_values(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  return {text(s.file), text(s.label), text(m.training().model.name), integer(m.global_batch()), integer(m.ranks())};
}

// mean ± half-width as two columns; the half-width is empty (no interval) below kMinimumRunsForInterval runs.
void add_mean_with_interval(std::vector<Column>& columns, const std::string& key, const std::string& header) {
  columns.push_back({key, header, 0, true});
  columns.push_back({key + "_ci95", "", 0, true, true, "± "});
}
void add_mean_with_interval(std::vector<Value>& row, const stats::SampleSummary& s) {
  row.push_back(number(s.mean));
  row.push_back(s.has_interval ? number(s.half_width) : none());
}

void add_ratio_with_interval(std::vector<Column>& columns, const std::string& key, const std::string& header) {
  columns.push_back({key, header, 3});
  columns.push_back({key + "_low", "", 3, false, true, "[", ","});
  columns.push_back({key + "_high", "", 3, false, true, "", "]"});
}
void add_ratio_with_interval(std::vector<Value>& row, const stats::RatioInterval& r) {
  row.push_back(number(r.ratio));
  row.push_back(r.has_interval ? number(r.low) : none());
  row.push_back(r.has_interval ? number(r.high) : none());
}

std::string format_p(double p) {
  char out[32];
  if (p >= 0.001)
    std::snprintf(out, sizeof out, "%.3f", p);
  else
    std::snprintf(out, sizeof out, "%.1e", p);
  return out;
}

void add_welch(std::vector<Column>& columns) {
  columns.push_back({"welch_t", "Welch t", 2});
  columns.push_back({"welch_df", "df", 1});
  columns.push_back(data_column("welch_p", "p"));
  // The terminal and Markdown show p through a text twin: fixed above 0.001, scientific below.
  Column p_text{"welch_p_text", "p"};
  p_text.shown = Shown::screen_only;
  columns.push_back(std::move(p_text));
}
void add_welch(std::vector<Value>& row, const stats::WelchTest& w) {
  if (!w.valid) {
    row.insert(row.end(), {none(), none(), none(), none()});
    return;
  }
  row.insert(row.end(), {number(w.t), number(w.df), number(w.p), text(format_p(w.p))});
}

std::string format_fixed(double value, int decimals) {
  char out[32];
  std::snprintf(out, sizeof out, "%.*f", decimals, value);
  return out;
}

std::string configuration_note_name(const stats::ConfigurationStats& s) { return "'" + s.file + "' " + s.label; }

// The replica check in one word: identical, 1 rank, not checked (a file before version 9, the PyTorch peer), DIFFER.
std::string replicas_word(const stats::ConfigurationStats& s) {
  switch (stats::replica_verdict(s.results->progress.replica_check)) {
    case stats::ReplicaVerdict::identical:
      return s.results->ranks() == 1 ? "1 rank" : "identical";
    case stats::ReplicaVerdict::not_checked:
      return "not checked";
    case stats::ReplicaVerdict::differ:
      break;
  }
  return "DIFFER";
}

// The math check in one word: passed, not checked (a file before version 10, the PyTorch peer), FAILED.
std::string math_check_word(const stats::ConfigurationStats& s) {
  switch (stats::math_check_verdict(s.results->metadata.math_check)) {
    case stats::MathCheckVerdict::passed:
      return "passed";
    case stats::MathCheckVerdict::not_checked:
      return "not checked";
    case stats::MathCheckVerdict::failed:
      break;
  }
  return "FAILED";
}

// The configuration's attributes the configurations table carries for scripts (bench/generate_docs.py checks the
// method and names the machine from them).
constexpr const char* kRecordedAttributes[] = {"parameter_count", "device", "gpu_names", "timing", "trial"};

const char* kIntervalNote = "± is the 95% Student-t interval t(0.975, n-1)·s/√n over the kept runs (none below 5 runs)";

}  // namespace

Table configurations_table(const std::vector<stats::ConfigurationStats>& configurations,
                           const stats::AnalysisOptions& options) {
  Table table;
  table.key = "configurations";
  table.title = "Throughput per configuration (samples/s over kept runs; step = max over ranks)";
  table.columns = identity_columns();
  table.columns.push_back({"runs_kept", "runs"});
  table.columns.push_back({"runs_total", "", 0, false, true, "/ "});
  add_mean_with_interval(table.columns, "samples_per_s_mean", "samples/s");
  table.columns.push_back({"samples_per_s_median", "median", 0, true});
  table.columns.push_back({"samples_per_s_sd", "sd", 0, true});
  table.columns.push_back({"cv_percent", "CV %", 2});
  table.columns.push_back({"step_ms", "step ms", 4});
  table.columns.push_back({"tflops", "TFLOP/s/GPU", 2});
  table.columns.push_back({"peak_memory_mib_per_gpu", "MiB/GPU", 0, true});
  table.columns.push_back({"throttled_runs", "throttled"});
  table.columns.push_back(text_column("complete", "complete"));
  table.columns.push_back(text_column("math_check", "math check"));
  table.columns.push_back(text_column("replicas", "replicas"));
  // For scripts (CSV, JSON): the attributes that say what a configuration is and how it was measured, as recorded.
  for (const char* attribute : kRecordedAttributes) table.columns.push_back(data_column(attribute, attribute));
  for (const stats::ConfigurationStats& s : configurations) {
    std::vector<Value> row = identity_values(s);
    row.push_back(integer(s.runs_kept));
    row.push_back(integer(s.runs_total));
    add_mean_with_interval(row, s.throughput);
    row.push_back(number(s.throughput.median));
    row.push_back(number(s.throughput.sd));
    row.push_back(number(100 * s.throughput.cv));
    row.push_back(number(s.mean_step_ms));
    row.push_back(number(s.tflops));
    row.push_back(number(s.peak_memory_mib));
    row.push_back(s.clocks_recorded ? integer(s.throttled_runs) : none());
    row.push_back(text(s.results->progress.complete != 0 ? "yes" : "no"));
    row.push_back(text(math_check_word(s)));
    row.push_back(text(replicas_word(s)));
    for (const char* attribute : kRecordedAttributes) {
      const auto found = s.results->attribute_text.find(attribute);
      row.push_back(found == s.results->attribute_text.end() ? none() : text(found->second));
    }
    table.add_row(std::move(row));
  }
  table.notes.push_back(kIntervalNote);
  char rule[200];
  std::snprintf(rule, sizeof rule,
                "Outliers: runs with |modified z| = |0.6745 (x - median) / MAD| > %g on run throughput are excluded "
                "(Iglewicz & Hoaglin; none when MAD = 0); warm-up steps %s.",
                options.outlier_threshold, options.include_warmup ? "INCLUDED (--include-warmup)" : "excluded");
  table.notes.push_back(rule);
  table.notes.push_back(
      "TFLOP/s/GPU = the step's GEMM FLOPs at the local batch B, 2 B (3 W - W0) for W dense weights of which W0 "
      "are the first layer's (it has no input gradient), / mean step; MiB/GPU = peak device memory, max over "
      "kept runs and ranks; throttled = kept runs with a rank below 75% of its max SM clock "
      "(— where clocks were not recorded).");
  for (const stats::ConfigurationStats& s : configurations) {
    if (s.runs_kept == s.runs_total) continue;
    std::string excluded = configuration_note_name(s) + ": excluded runs";
    for (std::size_t run = 0; run < s.run_kept.size(); ++run)
      if (!s.run_kept[run])
        excluded += " " + std::to_string(run) + " (" + format_fixed(s.run_throughput[run], 0) + " samples/s, M " +
                    format_fixed(s.run_modified_z[run], 2) + ")";
    table.notes.push_back(excluded);
  }
  for (const stats::ConfigurationStats& s : configurations)
    if (s.runs_kept < static_cast<int>(stats::kMinimumRunsForInterval))
      table.notes.push_back(configuration_note_name(s) + ": fewer than 5 kept runs, no interval");
  return table;
}

Table runs_table(const std::vector<stats::ConfigurationStats>& configurations) {
  Table table;
  table.key = "runs";
  table.title = "Runs (throughput over the counted steps; step = max over ranks)";
  table.on_screen = false;
  table.columns = identity_columns();
  table.columns.push_back({"run", "run"});
  table.columns.push_back({"samples_per_s", "samples/s", 0, true});
  table.columns.push_back({"modified_z", "M", 2});
  table.columns.push_back(text_column("kept", "kept"));
  for (const stats::ConfigurationStats& s : configurations)
    for (std::size_t run = 0; run < s.run_throughput.size(); ++run) {
      std::vector<Value> row = identity_values(s);
      row.push_back(integer(s.throughput_run_index[run]));  // the run's index in the file
      row.push_back(number(s.run_throughput[run]));
      row.push_back(number(s.run_modified_z[run]));
      row.push_back(text(s.run_kept[run] ? "yes" : "no"));
      table.add_row(std::move(row));
    }
  return table;
}

Table phases_table(const std::vector<stats::ConfigurationStats>& configurations) {
  Table table;
  table.key = "phases";
  table.title = "Mean step and its phases (ms, share of the step; critical rank of each step)";
  table.columns = identity_columns();
  table.columns.push_back({"step_ms", "step", 4});
  for (const stats::BreakdownPhase p :
       {stats::BreakdownPhase::forward, stats::BreakdownPhase::backward, stats::BreakdownPhase::allreduce,
        stats::BreakdownPhase::exposed_comm, stats::BreakdownPhase::optimizer, stats::BreakdownPhase::other}) {
    const std::string name = stats::kBreakdownPhaseNames[static_cast<int>(p)];
    table.columns.push_back({name + "_ms", name, 4});
    if (p != stats::BreakdownPhase::allreduce)
      table.columns.push_back({name + "_share_percent", "", 0, false, true, "(", "%)"});
  }
  table.columns.push_back({"overlap_percent", "overlap %", 0});
  for (const stats::ConfigurationStats& s : configurations) {
    std::vector<Value> row = identity_values(s);
    row.push_back(number(s.mean_step_ms));
    for (const stats::BreakdownPhase p :
         {stats::BreakdownPhase::forward, stats::BreakdownPhase::backward, stats::BreakdownPhase::allreduce,
          stats::BreakdownPhase::exposed_comm, stats::BreakdownPhase::optimizer, stats::BreakdownPhase::other}) {
      row.push_back(measured(s.phase(p)));
      if (p != stats::BreakdownPhase::allreduce) row.push_back(measured(100 * s.share(p)));
    }
    const double allreduce = s.phase(stats::BreakdownPhase::allreduce);
    // docs/statistics.md: overlap% = 100 (1 − exposed_comm / allreduce); nothing to overlap on one rank.
    row.push_back(s.results->ranks() > 1 && allreduce > 0 && !std::isnan(s.phase(stats::BreakdownPhase::exposed_comm))
                      ? number(100 * (1 - s.phase(stats::BreakdownPhase::exposed_comm) / allreduce))
                      : none());
    table.add_row(std::move(row));
  }
  table.notes.push_back(
      "step = forward + backward + exposed_comm + optimizer + other, all from the rank whose step "
      "time is the step's maximum; allreduce runs on the communication stream (not a term of the "
      "sum); overlap % = 100 (1 - exposed_comm / allreduce) (docs/statistics.md): 0 = no overlap, below 0 when the "
      "wait for the all-reduce exceeds the all-reduce itself (its launch latency).");
  return table;
}

namespace {

void add_components(std::vector<Value>& row, const stats::ScalingPair& pair) {
  if (!pair.in_trials()) {
    row.insert(row.end(), {none(), none(), none(), none()});
    return;
  }
  row.push_back(measured(pair.single_components.between_sd_percent()));
  row.push_back(measured(pair.single_components.within_sd_percent()));
  row.push_back(measured(pair.multi_components.between_sd_percent()));
  row.push_back(measured(pair.multi_components.within_sd_percent()));
}

// The mean over a pair's trials of a per-configuration figure.
template <typename Figure>
double trial_mean(const std::vector<const stats::ConfigurationStats*>& trials, Figure figure) {
  double sum = 0;
  for (const stats::ConfigurationStats* s : trials) sum += figure(*s);
  return sum / static_cast<double>(trials.size());
}

}  // namespace

Table scaling_table(const stats::Answer& answer) {
  const stats::ScalingTable& scaling = answer.scaling;
  // Files of one trial per configuration keep the columns they always had; trials add their count, both variance
  // components and the verdict.
  const bool trials = answer.any_trials();
  Table table;
  table.key = "scaling";
  table.title = "Scaling: N GPUs against 1 GPU of the same model, global batch and settings";
  table.columns = {text_column("model", "model"), {"global_batch", "batch"}, {"gpus", "GPUs"}};
  if (trials) table.columns.push_back({"trials", "trials"});
  table.columns.push_back(text_column("configuration", "N-GPU configuration"));
  add_mean_with_interval(table.columns, "single_samples_per_s", "1-GPU samples/s");
  add_mean_with_interval(table.columns, "multi_samples_per_s", "N-GPU samples/s");
  add_ratio_with_interval(table.columns, "speedup", "speedup [95%]");
  // Why a speedup has no interval ("too few runs", "too noisy"), for scripts that print a cell in its place.
  table.columns.push_back(data_column("speedup_missing_interval", "speedup_missing_interval"));
  table.columns.push_back({"efficiency", "efficiency", 3});
  // Where the file holds 1-GPU configurations at the local batches: each speedup's ceiling and the share of it reached.
  const bool ceilings = std::any_of(answer.pairs.begin(), answer.pairs.end(),
                                    [](const stats::PairAnswer& a) { return a.pair.has_ceiling(); });
  if (ceilings) {
    add_ratio_with_interval(table.columns, "ceiling", "ceiling [95%]");
    add_ratio_with_interval(table.columns, "ceiling_fraction", "of ceiling [95%]");
  }
  if (trials) {
    table.columns.push_back({"single_between_sd_percent", "1-GPU sd % between", 2});
    table.columns.push_back({"single_within_sd_percent", "within", 2});
    table.columns.push_back({"multi_between_sd_percent", "N-GPU sd % between", 2});
    table.columns.push_back({"multi_within_sd_percent", "within", 2});
  }
  table.columns.push_back({"single_memory_mib", "MiB/GPU", 0, true});
  table.columns.push_back({"multi_memory_mib", "", 0, true, true, "→ "});
  table.columns.push_back({"single_step_ms", "step ms", 4});
  table.columns.push_back({"multi_step_ms", "", 4, false, true, "→ "});
  add_welch(table.columns);
  if (trials) table.columns.push_back(text_column("verdict", "verdict"));
  const auto memory = [](const stats::ConfigurationStats& s) { return s.peak_memory_mib; };
  const auto step = [](const stats::ConfigurationStats& s) { return s.mean_step_ms; };
  for (const stats::PairAnswer& a : answer.pairs) {
    const stats::ScalingPair& pair = a.pair;
    std::vector<Value> row = {text(pair.multi().results->metadata.training().model.name), integer(a.global_batch),
                              integer(a.gpus)};
    if (trials) row.push_back(integer(static_cast<long long>(pair.trials())));
    row.push_back(text(pair.multi().label));
    add_mean_with_interval(row, pair.single_throughput);
    add_mean_with_interval(row, pair.multi_throughput);
    add_ratio_with_interval(row, pair.speedup);
    row.push_back(a.missing_interval.empty() ? none() : text(a.missing_interval));
    row.push_back(number(pair.efficiency));
    if (ceilings && pair.has_ceiling()) {
      add_ratio_with_interval(row, pair.ceiling);
      add_ratio_with_interval(row, pair.ceiling_fraction);
    } else if (ceilings) {
      row.insert(row.end(), 6, none());
    }
    if (trials) add_components(row, pair);
    row.push_back(number(trial_mean(pair.singles, memory)));
    row.push_back(number(trial_mean(pair.multis, memory)));
    row.push_back(number(trial_mean(pair.singles, step)));
    row.push_back(number(trial_mean(pair.multis, step)));
    add_welch(row, pair.welch);
    if (trials) row.push_back(text(a.conclusion));
    table.add_row(std::move(row));
  }
  table.notes.push_back(kIntervalNote);
  table.notes.push_back(std::string("speedup = mean N-GPU / mean 1-GPU throughput; interval: ") +
                        stats::kRatioIntervalMethod + ", 95%; efficiency = speedup / N.");
  table.notes.push_back("Welch: two-sided t-test of N-GPU against 1-GPU run throughputs (Welch-Satterthwaite df).");
  if (ceilings)
    table.notes.push_back(
        "ceiling = N x 1-GPU samples/s at the local batch (global batch / N) / 1-GPU samples/s at the global batch: "
        "the speedup if communication cost nothing; of ceiling = speedup / ceiling = N-GPU samples/s / (N x 1-GPU "
        "samples/s at the local batch); both with Fieller's interval, at the pair's level (docs/statistics.md, \"The "
        "ceiling\"). Empty where the file has no 1-GPU configuration at the local batch.");
  if (trials)
    table.notes.push_back(
        "A pair measured in trials (T independent processes: the trials of one job, or the files of several jobs of "
        "one command; each N-GPU trial with a 1-GPU trial of its own file, in order, where its file has one, else "
        "with those of the files given without N-GPU ones): samples/s = the mean of the trial means ± "
        "t(0.975, T-1)·s/√T over them; speedup over the trial means with Fieller's interval paired by trial, T-1 df, "
        "and no Welch test (docs/statistics.md, \"Trials\"); sd % between / within: the variance components of the "
        "kept runs' throughputs, trials as groups; MiB/GPU and step ms: means over the trials; verdict: the answer's, "
        "as mgpu_bench says it. The per-trial table (--per-trial, CSV, JSON) has each trial on its own.");
  for (const stats::ConfigurationStats* s : scaling.without_baseline)
    table.notes.push_back("NO 1-GPU BASELINE: " + missing_baseline_note(*s));
  for (const stats::ConfigurationStats* s : scaling.wrong_steps)
    table.notes.push_back("NOT PAIRED: " + configuration_note_name(*s) + ": " + s->wrong_step());
  for (const stats::ConfigurationStats* s : scaling.duplicate_baselines)
    table.notes.push_back("not used as a baseline (an earlier 1-GPU configuration has the same identity): " +
                          configuration_note_name(*s));
  for (const stats::ConfigurationStats* s : scaling.unmatched_trials)
    table.notes.push_back(
        "not paired (no trial of the other side is left for it, in its own file or in a file given without this "
        "side): " +
        configuration_note_name(*s));
  return table;
}

Table per_trial_table(const stats::Answer& answer, bool on_screen) {
  Table table;
  table.key = "per_trial";
  table.title = "Per trial: each N-GPU trial against the 1-GPU trial it pairs with, over their runs";
  table.on_screen = on_screen;
  table.columns = {text_column("model", "model"),
                   {"global_batch", "batch"},
                   {"gpus", "GPUs"},
                   {"trial", "trial"},
                   text_column("single_configuration", "1-GPU configuration"),
                   text_column("configuration", "N-GPU configuration")};
  add_mean_with_interval(table.columns, "single_samples_per_s", "1-GPU samples/s");
  add_mean_with_interval(table.columns, "multi_samples_per_s", "N-GPU samples/s");
  add_ratio_with_interval(table.columns, "speedup", "speedup [95%, runs]");
  add_welch(table.columns);
  for (const stats::PairAnswer& a : answer.pairs) {
    const stats::ScalingPair& pair = a.pair;
    if (!pair.in_trials()) continue;
    for (std::size_t k = 0; k < pair.trials(); ++k) {
      std::vector<Value> row = {text(pair.multi().results->metadata.training().model.name),
                                integer(a.global_batch),
                                integer(a.gpus),
                                integer(static_cast<long long>(k + 1)),
                                text(pair.singles[k]->label),
                                text(pair.multis[k]->label)};
      add_mean_with_interval(row, pair.singles[k]->throughput);
      add_mean_with_interval(row, pair.multis[k]->throughput);
      add_ratio_with_interval(row, pair.trial_speedups[k]);
      add_welch(row, pair.trial_welch[k]);
      table.add_row(std::move(row));
    }
  }
  table.notes.push_back(
      "One process's runs cannot show how processes differ (set-up, GEMM tuning): these intervals are narrower than "
      "the variation between trials, and are not the answer; the scaling table's pair row is (docs/statistics.md, "
      "\"Trials\").");
  table.notes.push_back(kIntervalNote);
  return table;
}

Table comparison_table(const stats::Comparison& comparison, const stats::CompareOptions& options) {
  Table table;
  table.key = "comparison";
  table.title = "Compare: after / before, per configuration present in both";
  table.columns = {text_column("configuration", "configuration"),
                   text_column("model", "model"),
                   {"global_batch", "batch"},
                   {"gpus", "GPUs"}};
  const bool trials = std::any_of(comparison.pairs.begin(), comparison.pairs.end(),
                                  [](const stats::ComparedPair& p) { return p.in_trials(); });
  if (trials) {
    table.columns.push_back({"before_trials", "trials"});
    table.columns.push_back({"after_trials", "", 0, false, true, "/ "});
  }
  add_mean_with_interval(table.columns, "before_samples_per_s", "before samples/s");
  add_mean_with_interval(table.columns, "after_samples_per_s", "after samples/s");
  add_ratio_with_interval(table.columns, "ratio", "after/before [" + stats::percent_text(options.confidence) + "]");
  table.columns.push_back({"change_percent", "change %", 2});
  add_welch(table.columns);
  table.columns.push_back(text_column("verdict", "verdict"));
  for (const stats::ComparedPair& pair : comparison.pairs) {
    const ConfigurationMetadata& m = pair.after->results->metadata;
    const std::string label =
        pair.before->label == pair.after->label ? pair.after->label : pair.before->label + " → " + pair.after->label;
    std::vector<Value> row = {text(label), text(m.training().model.name), integer(m.global_batch()),
                              integer(m.ranks())};
    if (trials) {
      row.push_back(integer(static_cast<long long>(pair.before_trials)));
      row.push_back(integer(static_cast<long long>(pair.after_trials)));
    }
    add_mean_with_interval(row, pair.before_throughput);
    add_mean_with_interval(row, pair.after_throughput);
    add_ratio_with_interval(row, pair.ratio);
    row.push_back(number(100 * (pair.ratio.ratio - 1)));
    add_welch(row, pair.welch);
    row.push_back(text(pair.verdict_text));
    table.add_row(std::move(row));
  }
  const auto words = [](stats::SpeedupVerdict verdict) { return stats::speedup_verdict_words(verdict, ""); };
  const std::string band = stats::percent_text(options.min_effect);
  table.notes.push_back("verdict (the answer's interval rule, in its words): " + words(stats::SpeedupVerdict::faster) +
                        " / " + words(stats::SpeedupVerdict::slower) + " when the ratio's " +
                        stats::percent_text(options.confidence) + " interval lies wholly above 1 + " + band +
                        " / below 1 - " + band + ", " + words(stats::SpeedupVerdict::no_significant_difference) +
                        " when it contains 1, " + words(stats::SpeedupVerdict::no_clear_difference) +
                        " when it excludes 1 but not the band, too few runs or too noisy to tell without an interval; "
                        "Welch's test is reported, not judged by.");
  std::string pairing = options.match_nccl_settings
                            ? "paired by model, widths, batch, GPUs, NCCL algorithm/protocol and every other setting"
                            : "paired by model, widths, batch, GPUs and every other setting except the NCCL "
                              "algorithm/protocol (--ignore-nccl-settings)";
  for (const std::string& name : options.ignored_settings)
    pairing +=
        name == stats::kPerBatchSettings ? ", whatever the settings decided per batch" : ", whatever their " + name;
  table.notes.push_back(pairing + (options.ignored_settings.empty() ? "" : " (--ignore-setting)"));
  table.notes.push_back(std::string("ratio interval: ") + stats::kRatioIntervalMethod + ", " +
                        stats::percent_text(options.confidence) + ".");
  if (trials)
    table.notes.push_back(
        "trials before / after: where both sides hold two or more trials of a configuration, samples/s is the mean of "
        "its trial means ± t(0.975, T-1)·s/√T, and the ratio, its interval and Welch's test are of the trial means.");
  table.notes.push_back(kIntervalNote);
  for (const stats::ConfigurationStats* s : comparison.only_before)
    table.notes.push_back("only in BEFORE: " + configuration_note_name(*s));
  for (const stats::ConfigurationStats* s : comparison.only_after)
    table.notes.push_back("only in AFTER: " + configuration_note_name(*s));
  return table;
}

}  // namespace mgpu::analysis
