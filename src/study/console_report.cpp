// Purpose: console formatting of the banner, per-run lines and the closing summary.
#include "study/console_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "config/settings_table.hpp"
#include "platform/build_info.hpp"
#include "platform/number_text.hpp"
#include "stats/run_kinds.hpp"
#include "stats/verdict.hpp"

namespace mgpu {

std::string setup_text(double setup_seconds, int candidates_checked, int candidates_rejected,
                       double verification_seconds) {
  char text[160];
  int length = std::snprintf(text, sizeof text, "%.2f s on rank 0", setup_seconds);
  if (candidates_checked > 0 && length > 0) {
    const double share = setup_seconds > 0.0 ? 100.0 * verification_seconds / setup_seconds : 0.0;
    std::snprintf(text + length, sizeof text - static_cast<std::size_t>(length),
                  ", of which %.2f s (%.1f%%) verified %d GEMM candidates (%d rejected)", verification_seconds, share,
                  candidates_checked, candidates_rejected);
  }
  return text;
}

std::string build_text() { return std::string(project_version()) + " (git " + git_revision() + ")"; }

void print_notice(std::FILE* out, const std::string& notice) {
  std::fprintf(out, "#\n# NOTE: %s\n#\n", notice.c_str());
}

std::string sweep_plan_text(bool at_most, std::size_t configurations, long long runs) {
  return std::string(at_most ? "at most " : "") + std::to_string(configurations) + " configurations, " +
         std::to_string(runs) + " runs";
}

void print_sweep_plan(std::FILE* out, const std::string& plan, const std::string& results_path) {
  std::fprintf(out, "# sweep: %s, results %s\n", plan.c_str(), results_path.c_str());
}

void print_banner(std::FILE* out, const BannerFacts& facts) {
  const Configuration& configuration = *facts.configuration;
  const TrainingSettings& st = configuration.training;
  const MlpSpec& model = st.model;
  const unsigned long long bytes = model.parameter_count() * 4ull;  // fp32
  std::fprintf(out, "# mgpu_bench %s\n", facts.build.c_str());
  std::fprintf(out, "# model %s %s: %s parameters, dropout %.2f\n", model.name.c_str(), model.widths_string().c_str(),
               with_thousands(model.parameter_count()).c_str(), model.dropout);
  std::fprintf(out, "#   fp32 bytes: parameters %s, gradients %s, Adam state %s\n", with_thousands(bytes).c_str(),
               with_thousands(bytes).c_str(), with_thousands(2 * bytes).c_str());
  // The grid's part (what the configuration's name says), then every setting with a banner word, from its row.
  std::fprintf(out, "# device %s, ranks %d, global batch %d (%d per rank)%s\n", backend_name(facts.backend),
               facts.ranks, st.global_batch, st.global_batch / facts.ranks,
               banner_settings_text(configuration).c_str());
  // Every step option that applies, in the results file's words (config/settings_table.hpp).
  const std::string step = step_settings_text(configuration, facts.backend == Backend::cuda);
  std::fprintf(out, "# step: %s", step.c_str());
  if (st.gemm_tuning == GemmTuning::plan) std::fprintf(out, " (GEMM plan from %s)", st.gemm_plan.source.c_str());
  std::fprintf(out, "\n");
  const LibraryVersions& v = facts.versions;
  std::fprintf(out, "# NCCL %s, CUDA runtime %s, driver %s, cuBLAS %s, MPI %s\n", v.nccl.c_str(),
               v.cuda_runtime.c_str(), v.cuda_driver.c_str(), v.cublas.c_str(), v.mpi.c_str());
  std::string environment;
  for (const std::string& variable : facts.nccl_environment) environment += " " + variable;
  std::fprintf(out, "# NCCL environment:%s (preset %s)\n", environment.empty() ? " (none)" : environment.c_str(),
               facts.environment_preset.c_str());
  std::fprintf(out, "# %5s  %-20s  %-22s  %-14s  %s\n", "rank", "host", "gpu", "pci bus id", "uuid");
  for (int r = 0; r < facts.ranks; ++r) {
    const RankHardware& h = facts.hardware[r];
    std::fprintf(out, "# %5d  %-20s  %-22s  %-14s  %s\n", r, facts.hosts[r].c_str(), h.gpu_name.c_str(),
                 h.pci_bus_id.c_str(), h.gpu_uuid.c_str());
  }
  if (facts.backend == Backend::cuda) {
    for (int r = 0; r < facts.ranks; ++r)
      std::fprintf(out, "# topology rank %d: %s\n", r, facts.hardware[r].peer_topology.c_str());
  }
  if (!facts.unique_id.empty()) std::fprintf(out, "# unique id: %s\n", facts.unique_id.c_str());
  if (!facts.setup.empty()) std::fprintf(out, "# set-up: %s\n", facts.setup.c_str());
  if (!facts.math_check.empty()) std::fprintf(out, "# math check: %s\n", facts.math_check.c_str());
  std::fprintf(out, "# results: %s\n#\n", facts.output_path.c_str());
}

void print_run_header(std::FILE* out) {
  std::fprintf(out, "# %4s %12s %9s %9s %9s %9s %9s %9s %10s\n", "run", "samples/s", "step_ms", "fwd_ms", "bwd_ms",
               "ar_ms", "exp_ms", "opt_ms", "loss");
}

void print_run_line(std::FILE* out, int run_index, const RunSummary& run, bool interleaved) {
  const auto& ms = run.mean_ms;
  std::fprintf(out, "  %4d %12.1f %9.4f", run_index, run.samples_per_second, run.mean_step_ms);
  if (interleaved && !run.phases_marked) {
    // No mark inside these steps: their phases were not measured, which a column of zeros would hide.
    std::fprintf(out, " %9s %9s %9s %9s %9s", "-", "-", "-", "-", "-");
  } else {
    std::fprintf(out, " %9.4f %9.4f %9.4f %9.4f %9.4f", ms[int(Phase::forward)], ms[int(Phase::backward)],
                 ms[int(Phase::allreduce)], ms[int(Phase::exposed_comm)], ms[int(Phase::optimizer)]);
  }
  std::fprintf(out, " %10.6f%s\n", run.final_loss,
               interleaved && run.phases_marked ? "  phases marked (not in samples/s)" : "");
  std::fflush(out);
}

void print_runs_end(std::FILE* out, std::size_t runs_made, int planned_runs, const std::string& stopped_early,
                    const std::string& replica_check) {
  if (!stopped_early.empty())
    std::fprintf(out, "# stopped after %zu of %d runs: %s\n", runs_made, planned_runs, stopped_early.c_str());
  std::fprintf(out, "# replicas after the runs: %s\n", replica_check.c_str());
}

namespace {

// Where a configuration has runs without phase marks and runs with them (--timing interleaved), throughput and the
// mean step come from the unmarked runs and the phases from the marked ones, as in the analyzer
// (stats/configuration_stats.hpp); otherwise every run gives both.
struct Means {
  double samples_per_second = 0;
  std::array<double, kPhaseCount> phase_ms{};  // step: the mean step of the throughput runs
  std::size_t throughput_runs = 0;
  std::size_t phase_runs = 0;     // 0 when the phases come from the throughput runs
  double phase_runs_step_ms = 0;  // the mean step of the phase runs, which their phases sum to
};

// The runs of each kind (stats/run_kinds.hpp) among rank 0's summaries.
stats::RunKinds kinds_of(const std::vector<RunSummary>& runs) {
  std::vector<bool> marked;
  for (const RunSummary& run : runs) marked.push_back(run.phases_marked);
  return stats::run_kinds(marked);
}

Means means_of(const std::vector<RunSummary>& runs) {
  const stats::RunKinds kinds = kinds_of(runs);
  const std::vector<int>& phase_runs = kinds.split() ? kinds.phases : kinds.throughput;
  Means means;
  means.throughput_runs = kinds.throughput.size();
  means.phase_runs = kinds.phases.size();
  for (const int r : kinds.throughput) {
    const RunSummary& run = runs[static_cast<std::size_t>(r)];
    means.samples_per_second += run.samples_per_second / double(kinds.throughput.size());
    means.phase_ms[int(Phase::step)] += run.mean_step_ms / double(kinds.throughput.size());
  }
  for (const int r : phase_runs) {
    const RunSummary& run = runs[static_cast<std::size_t>(r)];
    for (int p = 0; p < kPhaseCount; ++p)
      if (Phase(p) != Phase::step) means.phase_ms[p] += run.mean_ms[p] / double(phase_runs.size());
    means.phase_runs_step_ms += run.mean_step_ms / double(phase_runs.size());
  }
  return means;
}

}  // namespace

void print_sweep_table(std::FILE* out, const std::vector<SweepTableRow>& rows) {
  std::fprintf(
      out,
      "#\n# sweep: mean over runs (warm-up excluded) of each run's throughput and mean ms per step (max over ranks); "
      "with phase-marked runs, samples/s and step_ms from the unmarked runs and the phases from the marked ones "
      "(runs = unmarked + marked)\n");
  // No speedup column: the verdict after this table gives each speedup with its interval, computed by the analyzer's
  // statistics (outliers screened), so the job never prints two different speedups for one configuration.
  std::fprintf(out, "# %-28s %6s %7s %4s %5s %12s %9s %9s %9s %9s %9s\n", "configuration", "model", "batch", "gpus",
               "runs", "samples/s", "step_ms", "fwd_ms", "bwd_ms", "ar_ms", "opt_ms");
  // Each row's means, computed once (empty rows: never read).
  std::vector<Means> row_means(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (!rows[r].runs.empty()) row_means[r] = means_of(rows[r].runs);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const SweepTableRow& row = rows[r];
    const Configuration& c = *row.configuration;
    if (row.runs.empty()) {
      std::fprintf(out, "  %-28s %6s %7d %4d %5s   (complete in the file: skipped by --resume)\n", row.name.c_str(),
                   c.model().name.c_str(), c.global_batch(), c.gpus, "-");
      continue;
    }
    const Means& m = row_means[r];
    // "50+12": the throughput runs and the phase-marked ones, so neither count hides in the other.
    const std::string runs = m.phase_runs > 0 ? std::to_string(m.throughput_runs) + "+" + std::to_string(m.phase_runs)
                                              : std::to_string(row.runs.size());
    std::fprintf(out, "  %-28s %6s %7d %4d %5s %12.1f %9.4f %9.4f %9.4f %9.4f %9.4f\n", row.name.c_str(),
                 c.model().name.c_str(), c.global_batch(), c.gpus, runs.c_str(), m.samples_per_second,
                 m.phase_ms[int(Phase::step)], m.phase_ms[int(Phase::forward)], m.phase_ms[int(Phase::backward)],
                 m.phase_ms[int(Phase::allreduce)], m.phase_ms[int(Phase::optimizer)]);
  }
  std::fflush(out);
}

void print_summary(std::FILE* out, const std::vector<RunSummary>& runs, const std::string& results_path) {
  if (runs.empty()) return;
  const Means means = means_of(runs);
  std::vector<const RunSummary*> counted;  // the throughput runs
  for (const int r : kinds_of(runs).throughput) counted.push_back(&runs[static_cast<std::size_t>(r)]);
  const double n = static_cast<double>(counted.size());
  const double mean = means.samples_per_second;
  double low = counted.front()->samples_per_second, high = low, squares = 0, wall = 0;
  for (const RunSummary* run : counted) {
    low = std::min(low, run->samples_per_second);
    high = std::max(high, run->samples_per_second);
    squares += (run->samples_per_second - mean) * (run->samples_per_second - mean);
    wall += run->wall_step_ms / n;
  }
  const double sd = counted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  const std::array<double, kPhaseCount>& phase = means.phase_ms;
  const double step = phase[int(Phase::step)];
  // The phases' shares are of the step they were measured in.
  const double phase_step = means.phase_runs > 0 ? means.phase_runs_step_ms : step;
  auto share = [&](Phase p) { return phase_step > 0 ? 100.0 * phase[int(p)] / phase_step : 0.0; };
  std::fprintf(out, "#\n# summary over %zu runs (warm-up excluded): samples/s mean %.1f, sd %.1f, min %.1f, max %.1f\n",
               counted.size(), mean, sd, low, high);
  std::fprintf(out, "# mean step %.4f ms", step);
  if (means.phase_runs > 0)
    std::fprintf(out, " (runs without marks inside the step); phases from the %zu phase-marked runs, step %.4f ms",
                 means.phase_runs, phase_step);
  std::fprintf(out,
               " ~ forward %.4f (%.0f%%) + backward %.4f (%.0f%%) + exposed all-reduce %.4f "
               "(%.0f%%) + optimizer %.4f (%.0f%%); all-reduce %.4f ms (each term is its own max over ranks)\n",
               phase[int(Phase::forward)], share(Phase::forward), phase[int(Phase::backward)], share(Phase::backward),
               phase[int(Phase::exposed_comm)], share(Phase::exposed_comm), phase[int(Phase::optimizer)],
               share(Phase::optimizer), phase[int(Phase::allreduce)]);
  // What --timing none measures too: the run's measured part divided by its steps, gaps between steps included.
  std::fprintf(out, "# wall per measured step %.4f ms (first measured start -> last end, max over ranks)\n", wall);
  // docs/measurement.md: overlap% = 100 (1 - exposed_comm / allreduce); only meaningful where something was reduced.
  if (phase[int(Phase::allreduce)] > 0) {
    std::fprintf(out, "# overlap %.0f%% (100 x (1 - exposed_comm / allreduce))\n",
                 100.0 * (1.0 - phase[int(Phase::exposed_comm)] / phase[int(Phase::allreduce)]));
  }
  // The statistics of docs/statistics.md (intervals, outliers, tests) need every run of the raw per-step data: they are
  // mgpu_analyze's, so the console only points there, and the verdict at the end of the job gives them for speedups.
  std::fprintf(out,
               "# raw per-step, per-rank times are in the results file; confidence intervals, outlier screening and\n"
               "# tests (docs/statistics.md): mgpu_analyze report %s\n",
               results_path.c_str());
}

void print_verdict(std::FILE* out, const ResultsFile& results, int job_ranks) {
  std::fprintf(out, "#\n");
  for (const std::string& line : stats::verdict_lines(results, job_ranks)) std::fprintf(out, "# %s\n", line.c_str());
  std::fflush(out);
}

}  // namespace mgpu
