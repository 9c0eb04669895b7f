// Purpose: the CPU fallback's all-reduce engine: MPI_Allreduce (MPI_SUM on fp32) timed with the host clock.
#pragma once

#include <memory>

#include "comm/mpi_context.hpp"
#include "probes/allreduce_engine.hpp"

namespace mgpu {

// Collective. Buffers for up to max_elements fp32 values.
std::unique_ptr<AllreduceEngine> make_mpi_allreduce_engine(const MpiContext& mpi, std::size_t max_elements);

}  // namespace mgpu
