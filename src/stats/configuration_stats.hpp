// Purpose: one configuration's summary from its raw per-step, per-rank data (docs/measurement.md "Definitions" and
// "Statistics"): step = max over ranks, warm-up excluded by default, throughput per run, outliers on run throughputs,
// the phase breakdown of the mean step, TFLOP/s, peak memory per GPU and throttled runs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "stats/run_checks.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

struct AnalysisOptions {
  double outlier_threshold = kDefaultOutlierThreshold;  // |modified z| above this excludes a run
  bool include_warmup = false;                          // count warm-up steps as measured steps
};

// The breakdown of the mean step. Each step is attributed to its critical rank (the rank whose step time is the
// distributed step's, i.e. the maximum), so forward + backward + exposed_comm + optimizer + other = step exactly.
// allreduce runs on the communication stream beside the others and is not a term of the sum (docs/statistics.md).
enum class BreakdownPhase : int { forward = 0, backward, allreduce, exposed_comm, optimizer, other, step };
inline constexpr int kBreakdownPhaseCount = static_cast<int>(BreakdownPhase::step) + 1;  // step is the last
inline constexpr std::array<const char*, kBreakdownPhaseCount> kBreakdownPhaseNames = {
    "forward", "backward", "allreduce", "exposed_comm", "optimizer", "other", "step"};
// The phases whose sum is the step (the stacked bars and the shares).
inline constexpr std::array<BreakdownPhase, 5> kStackedPhases = {BreakdownPhase::forward, BreakdownPhase::backward,
                                                                 BreakdownPhase::exposed_comm,
                                                                 BreakdownPhase::optimizer, BreakdownPhase::other};

// Which runs give what (--timing, docs/measurement.md): where a configuration has runs without phase marks
// (phases_marked = 0) and runs with them (1), as --timing interleaved makes, throughput, speedup and the mean step come
// from the unmarked runs (each mark slows the step) and the phase breakdown from the marked ones. Otherwise (one
// kind of run, or a file older than schema_version 7) every run gives both.
struct ConfigurationStats {
  std::string file;
  std::string label;  // configuration_label(): name plus non-default settings
  const ConfigurationResults* results = nullptr;

  // The throughput runs (see above). Every run_* vector below has one entry per throughput run, in run order;
  // throughput_run_index maps it to the run's index in the file.
  int runs_total = 0;
  int runs_kept = 0;
  std::vector<int> throughput_run_index;
  std::vector<double> run_throughput;  // samples/s of every throughput run
  std::vector<double> run_modified_z;  // of every throughput run's throughput
  std::vector<bool> run_kept;
  std::vector<double> kept_throughput;  // the kept runs' throughputs
  // The runs the phase breakdown comes from when they are not the throughput runs (0 otherwise), and how many of
  // them the outlier screen (over their own throughputs) kept.
  int phase_runs_total = 0;
  int phase_runs_kept = 0;
  int steps_per_run = 0;     // steps counted per run (measured, or all with include_warmup)
  SampleSummary throughput;  // over the kept runs
  // Mean over kept runs and counted steps, ms: the breakdown (forward ... other, and the step they sum to) over the
  // phase runs where there are any, else over the throughput runs.
  std::array<double, kBreakdownPhaseCount> phase_ms{};
  double mean_step_ms = 0;       // over the kept throughput runs: what throughput and TFLOP/s are computed from
  double tflops = 0;             // per GPU: step_flops (model/step_flops.hpp) at the local batch / mean step
  double peak_memory_mib = 0;    // max over kept runs and ranks of memory_peak_bytes, MiB
  bool clocks_recorded = false;  // some run had clock samples
  int throttled_runs = 0;        // kept runs with any rank flagged throttled

  double phase(BreakdownPhase p) const { return phase_ms[static_cast<int>(p)]; }
  // Why the step is known to compute another update than it claims, "" when nothing says so: its math check failed
  // (math_check) or the ranks' parameters differed after the runs (replica_check). Such a configuration gives no
  // speedup and takes no part in a verdict.
  std::string wrong_step() const {
    if (math_check_verdict(results->metadata.math_check) == MathCheckVerdict::failed)
      return "its math check failed (" + results->metadata.math_check + ")";
    if (replica_verdict(results->progress.replica_check) == ReplicaVerdict::differ)
      return "the ranks' parameters differed after its runs (" + results->progress.replica_check + ")";
    return "";
  }
  // Share of the step the breakdown sums to, 0..1 (only meaningful for the stacked phases).
  double share(BreakdownPhase p) const {
    const double step = phase(BreakdownPhase::step);
    return step > 0 ? phase(p) / step : 0;
  }
};

// Throws UsageError when the configuration has no completed run or no counted step.
ConfigurationStats compute_configuration_stats(const ConfigurationResults& configuration, const std::string& file,
                                               const AnalysisOptions& options);

}  // namespace mgpu::stats
