// Purpose: the conditions docs/measurement.md asks to record, for the standalone measurements (`allreduce`, `probe`):
// collected from every rank, and printed as the '#' banner their console output starts with.
#pragma once

#include <cstdio>
#include <string>

#include "comm/mpi_context.hpp"
#include "results/results_schema.hpp"
#include "study/backend.hpp"
#include "study/rank_facts.hpp"

namespace mgpu {

// Collective: versions, NCCL_* environment and NCCL_ALGO/PROTO in effect, and every rank's host, GPU and topology.
results_schema::MeasurementConditions describe_standalone_conditions(const BackendChoice& choice, const MpiContext& mpi,
                                                                     const std::string& command_line);

// "# mgpu_bench 0.1.0 (git ...) <title>", versions, NCCL environment, one line per rank, topology, results path.
void print_standalone_banner(std::FILE* out, const std::string& title,
                             const results_schema::MeasurementConditions& conditions, const std::string& output_path);

}  // namespace mgpu
