// Purpose: a sweep end to end: plan the configurations, agree on the back-end, open (or resume) the results file, and
// run each configuration on its first k ranks: train every run, gather each run's per-rank timings to rank 0, print
// them and append them to the results file.
#pragma once

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"

namespace mgpu {

// Collective over mpi.comm. Throws UsageError (same message on every rank) for bad input, Error otherwise.
void run_benchmark(const BenchOptions& options, const MpiContext& mpi);

}  // namespace mgpu
