// Purpose: what rank 0 prints, nccl-tests style: '#'-prefixed banner, one line per run, then a summary.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "backend.hpp"
#include "options.hpp"
#include "run_summary.hpp"

namespace mgpu {

struct BannerFacts {
  const BenchOptions* options = nullptr;
  Backend backend = Backend::cpu;
  int ranks = 1;
  LibraryVersions versions;
  std::vector<std::string> hosts;             // per rank
  std::vector<RankHardware> hardware;         // per rank
  std::vector<std::string> nccl_environment;  // "NAME=value"
  std::string output_path;
  const TrainingSettings* settings = nullptr;  // the resolved step execution (graph, overlap, ...)
};

void print_banner(std::FILE* out, const BannerFacts& facts);
void print_run_header(std::FILE* out);
void print_run_line(std::FILE* out, int run_index, const RunSummary& run);
void print_summary(std::FILE* out, const std::vector<RunSummary>& runs);

// "6,885,376"
std::string with_thousands(unsigned long long value);

}  // namespace mgpu
