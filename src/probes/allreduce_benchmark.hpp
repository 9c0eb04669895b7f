// Purpose: `mgpu_bench allreduce`: the standalone all-reduce sweep (the yardstick of the in-step communication):
// data check, timing per size, console table nccl-tests style, and the /allreduce group of the results file.
#pragma once

#include "cli/tool_options.hpp"
#include "comm/mpi_context.hpp"

namespace mgpu {

// Collective over mpi.comm. Throws UsageError (the same line on every rank) for bad input and for a failed data
// check (after writing the results, which record it); Error otherwise.
void run_allreduce_benchmark(const AllreduceOptions& options, const MpiContext& mpi);

// docs/measurement.md: algbw = bytes / t (decimal GB/s), busbw = algbw x 2(N-1)/N. t in milliseconds.
double algorithm_bandwidth_gbps(double bytes, double milliseconds);
double bus_bandwidth_gbps(double algbw_gbps, int ranks);

}  // namespace mgpu
