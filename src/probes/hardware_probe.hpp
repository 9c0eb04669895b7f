// Purpose: `mgpu_bench probe`: the rates of one GPU that bound a training step from below (docs/performance.md):
// device copy bandwidth, cuBLAS GEMM time at the models' exact shapes in fp32/tf32/bf16, and launch costs.
#pragma once

#include "cli/tool_options.hpp"
#include "comm/mpi_context.hpp"

namespace mgpu {

// One process, one GPU. Throws UsageError for more than one rank, no GPU or a build without CUDA, or an output
// file that cannot take a /probe group (checked before measuring); Error otherwise.
void run_hardware_probe(const ProbeOptions& options, const MpiContext& mpi);

}  // namespace mgpu
