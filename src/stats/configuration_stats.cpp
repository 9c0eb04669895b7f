// Purpose: per-configuration summary from the raw per-step data.
#include "stats/configuration_stats.hpp"

#include <algorithm>
#include <cmath>

#include "model/step_flops.hpp"
#include "platform/error.hpp"
#include "stats/pairing_identity.hpp"
#include "stats/run_kinds.hpp"
#include "stats/step_time_check.hpp"

namespace mgpu::stats {

namespace {

using PhaseSums = std::array<double, kBreakdownPhaseCount>;

// The steps that count: every step but the warm-up (or every step with --include-warmup).
std::vector<int> counted_steps_of(const ConfigurationResults& c, const AnalysisOptions& options,
                                  const std::string& where) {
  std::vector<int> counted;
  for (int step = 0; step < c.steps(); ++step)
    if (options.include_warmup || c.is_warmup[static_cast<std::size_t>(step)] == 0) counted.push_back(step);
  if (counted.empty()) throw UsageError(where + " has no measured step");
  return counted;
}

// Per run: the sum over the counted steps of every breakdown phase of each step's critical rank (docs/statistics.md:
// the distributed step is the max over ranks).
std::vector<PhaseSums> run_phase_sums(const ConfigurationResults& c, const std::vector<int>& counted_steps) {
  const auto& ms = c.measurements.phase_ms;
  const auto phase_of = [&](Phase p, int run, int rank, int step) {
    return ms[static_cast<int>(p)].at(run, rank, step);
  };
  std::vector<PhaseSums> sums_of_runs(static_cast<std::size_t>(c.runs()));
  for (int run = 0; run < c.runs(); ++run) {
    PhaseSums& sums = sums_of_runs[static_cast<std::size_t>(run)];
    sums.fill(0);
    for (const int step : counted_steps) {
      int critical = 0;
      for (int rank = 1; rank < c.ranks(); ++rank)
        if (phase_of(Phase::step, run, rank, step) > phase_of(Phase::step, run, critical, step)) critical = rank;
      const double step_ms = phase_of(Phase::step, run, critical, step);
      double named = 0;
      for (const Phase p : {Phase::forward, Phase::backward, Phase::allreduce, Phase::exposed_comm, Phase::optimizer}) {
        const double value = phase_of(p, run, critical, step);
        sums[static_cast<int>(p)] += value;  // Phase and BreakdownPhase share their first five indices
        if (p != Phase::allreduce) named += value;
      }
      sums[static_cast<int>(BreakdownPhase::other)] += step_ms - named;
      sums[static_cast<int>(BreakdownPhase::step)] += step_ms;
    }
  }
  return sums_of_runs;
}

// The outlier screen over some runs' throughputs (filled in, with their modified z-scores and whether each is kept);
// returns the kept runs' file indices.
std::vector<int> screen_runs(const std::vector<int>& runs, const std::vector<double>& all_throughput, double threshold,
                             std::vector<double>& throughput, std::vector<double>& z, std::vector<bool>& kept) {
  for (const int run : runs) throughput.push_back(all_throughput[static_cast<std::size_t>(run)]);
  z = modified_z_scores(throughput);
  kept = outlier_free(throughput, threshold);
  std::vector<int> kept_runs;
  // at(): a read one past the end of a vector<bool> stays inside its last word, where no sanitizer sees it.
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (kept.at(i)) kept_runs.push_back(runs.at(i));
  return kept_runs;
}

// The peak memory, throttling and whether clocks were sampled, over the given runs of every rank.
void add_conditions(ConfigurationStats& s, const ConfigurationResults& c, const std::vector<int>& runs) {
  for (const int run : runs) {
    std::int64_t peak = 0;
    bool throttled = false;
    for (int rank = 0; rank < c.ranks(); ++rank) {
      peak = std::max(peak, c.measurements.memory_peak_bytes.at(run, rank));
      throttled = throttled || c.measurements.throttled.at(run, rank) != 0;
      s.clocks_recorded = s.clocks_recorded || c.measurements.clock_samples.at(run, rank) > 0;
    }
    s.peak_memory_mib = std::max(s.peak_memory_mib, double(peak) / (1024.0 * 1024.0));
    if (throttled) ++s.throttled_runs;
  }
}

}  // namespace

ConfigurationStats compute_configuration_stats(const ConfigurationResults& c, const std::string& file,
                                               const AnalysisOptions& options) {
  ConfigurationStats s;
  s.file = file;
  s.label = configuration_label(c);
  s.results = &c;
  s.runs_total = c.runs();
  const std::string where = "'" + file + "': configuration '" + c.metadata.name + "'";
  if (s.runs_total < 1) throw UsageError(where + " has no completed run");
  check_step_times(c, file);
  const std::vector<int> counted_steps = counted_steps_of(c, options, where);
  s.steps_per_run = static_cast<int>(counted_steps.size());
  const std::vector<PhaseSums> sums = run_phase_sums(c, counted_steps);
  std::vector<double> all_throughput;  // of every run, in run order
  for (const PhaseSums& run : sums) {
    const double seconds = run[static_cast<int>(BreakdownPhase::step)] / 1000.0;
    all_throughput.push_back(seconds > 0 ? c.metadata.global_batch() * double(s.steps_per_run) / seconds : 0);
  }

  // Which runs carry phase marks (rank 0 says for its run; every rank's run is timed alike; NaN, a file before the
  // dataset, counts as marked: one kind of run) and so what each kind gives (run_kinds.hpp).
  std::vector<bool> marked;
  for (int run = 0; run < s.runs_total; ++run) marked.push_back(!(c.measurements.phases_marked.at(run, 0) == 0));
  const RunKinds kinds = run_kinds(marked);
  const bool split = kinds.split();
  s.throughput_run_index = kinds.throughput;

  const std::vector<int> kept_runs = screen_runs(s.throughput_run_index, all_throughput, options.outlier_threshold,
                                                 s.run_throughput, s.run_modified_z, s.run_kept);
  s.runs_total = static_cast<int>(s.throughput_run_index.size());
  s.runs_kept = static_cast<int>(kept_runs.size());
  for (const int run : kept_runs) s.kept_throughput.push_back(all_throughput[static_cast<std::size_t>(run)]);
  std::vector<int> kept_phase_runs = kept_runs;
  if (split) {
    std::vector<double> throughput, z;
    std::vector<bool> kept;
    kept_phase_runs = screen_runs(kinds.phases, all_throughput, options.outlier_threshold, throughput, z, kept);
    s.phase_runs_total = static_cast<int>(kinds.phases.size());
    s.phase_runs_kept = static_cast<int>(kept_phase_runs.size());
  }

  for (const int run : kept_phase_runs)
    for (int p = 0; p < kBreakdownPhaseCount; ++p) s.phase_ms[p] += sums[static_cast<std::size_t>(run)][p];
  for (double& value : s.phase_ms) value /= double(kept_phase_runs.size()) * s.steps_per_run;
  for (const int run : kept_runs)
    s.mean_step_ms += sums[static_cast<std::size_t>(run)][static_cast<int>(BreakdownPhase::step)];
  s.mean_step_ms /= double(s.runs_kept) * s.steps_per_run;

  std::vector<int> every_kept_run = kept_runs;
  if (split) every_kept_run.insert(every_kept_run.end(), kept_phase_runs.begin(), kept_phase_runs.end());
  add_conditions(s, c, every_kept_run);
  // step − (sum of four phases) of a step without a gap is the rounding of the stored fp32 event times (~1e-7 of the
  // step), far below the events' resolution (~0.5 µs); it is the 0 it stands for.
  double& other = s.phase_ms[static_cast<int>(BreakdownPhase::other)];
  if (std::fabs(other) < 1e-6 * s.phase(BreakdownPhase::step)) other = 0;
  s.throughput = summarize_sample(s.kept_throughput);
  // Per GPU, so that a figure compares with one GPU's peak: each rank runs the step on its local batch.
  if (s.mean_step_ms > 0 && c.metadata.ranks() > 0)
    s.tflops = step_flops(c.metadata.configuration.model(), c.metadata.global_batch() / c.metadata.ranks()) /
               (s.mean_step_ms / 1000.0) / 1e12;
  return s;
}

}  // namespace mgpu::stats
