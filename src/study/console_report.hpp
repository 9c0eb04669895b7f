// Purpose: what rank 0 prints, nccl-tests style: '#'-prefixed banner, one line per run, then a summary.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "study/backend.hpp"
#include "study/rank_facts.hpp"
#include "study/run_summary.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {

struct BannerFacts {
  std::string build;  // "0.1.0 (git 6ff1a7a9d516)": the build that measured (build_text() for this one)
  const Configuration* configuration = nullptr;  // resolved: its step settings are what the banner prints
  Backend backend = Backend::cpu;
  int ranks = 1;
  LibraryVersions versions;
  std::vector<std::string> hosts;             // per rank
  std::vector<RankHardware> hardware;         // per rank
  std::vector<std::string> nccl_environment;  // "NAME=value"
  std::string output_path;
  std::string environment_preset = "none";
  std::string math_check;  // the configuration's math_check attribute
  std::string unique_id;   // how rank 0's unique id reached the ranks (Trainer::unique_id_check)
  std::string setup;       // setup_text() of rank 0's trainer
};

// Rank 0's set-up of a configuration (its trainer: communicator, buffers, warm-up steps, GEMM tuning, graph capture)
// and the part of it that verifying GEMM candidates took: "T s on rank 0, of which V s (P%) verified N GEMM
// candidates (R rejected)"; the first clause alone where no candidate was verified (the CPU fallback).
std::string setup_text(double setup_seconds, int candidates_checked, int candidates_rejected,
                       double verification_seconds);

// One configuration's result for the closing table of a sweep.
struct SweepTableRow {
  const Configuration* configuration = nullptr;
  std::string name;
  std::vector<RunSummary> runs;  // warm-up excluded; empty for a configuration --resume skipped
};

// This build as the banner names it: "0.1.0 (git 6ff1a7a9d516)".
std::string build_text();
// The job's notice ("#\n# NOTE: ...\n#"), and its plan: "# sweep: 2 configurations, 124 runs, results FILE" (the plan
// text of sweep_plan_text).
void print_notice(std::FILE* out, const std::string& notice);
std::string sweep_plan_text(bool at_most, std::size_t configurations, long long runs);
void print_sweep_plan(std::FILE* out, const std::string& plan, const std::string& results_path);

void print_banner(std::FILE* out, const BannerFacts& facts);
void print_run_header(std::FILE* out);
// `interleaved` (--timing interleaved): the runs that marked their phases say so (their step is not in samples/s).
void print_run_line(std::FILE* out, int run_index, const RunSummary& run, bool interleaved);
// After a configuration's runs: why they stopped before the planned number (nothing when they did not), and the
// replicas' check.
void print_runs_end(std::FILE* out, std::size_t runs_made, int planned_runs, const std::string& stopped_early,
                    const std::string& replica_check);
// Mean throughput over a configuration's throughput runs and phases over its phase runs (the same runs unless
// --timing interleaved made both kinds), and where its statistics are: `mgpu_analyze report
// results_path`.
void print_summary(std::FILE* out, const std::vector<RunSummary>& runs, const std::string& results_path);
// The sweep's closing table: per configuration the mean throughput and phase times over its runs (speedups are the
// verdict's, printed after it).
void print_sweep_table(std::FILE* out, const std::vector<SweepTableRow>& rows);

// The verdict (stats/verdict.hpp) of the results file a job of `job_ranks` ranks has written, '#'-prefixed.
void print_verdict(std::FILE* out, const ResultsFile& results, int job_ranks);

}  // namespace mgpu
