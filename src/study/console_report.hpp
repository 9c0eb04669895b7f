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

void print_banner(std::FILE* out, const BannerFacts& facts);
void print_run_header(std::FILE* out);
// `interleaved` (--timing interleaved): the runs that marked their phases say so (their step is not in samples/s).
void print_run_line(std::FILE* out, int run_index, const RunSummary& run, bool interleaved);
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
