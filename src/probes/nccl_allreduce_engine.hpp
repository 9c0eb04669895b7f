// Purpose: the GPU all-reduce engine: ncclAllReduce on this rank's GPU, timed with CUDA events on its stream.
#pragma once

#include <memory>

#include "comm/mpi_context.hpp"
#include "probes/allreduce_engine.hpp"

namespace mgpu {

// Collective over mpi.comm (creates the NCCL communicator). Refuses (UsageError, agreed by every rank) when two
// buffers of max_elements do not fit in the free memory of some rank's GPU.
std::unique_ptr<AllreduceEngine> make_nccl_allreduce_engine(const MpiContext& mpi, int device_ordinal,
                                                            AllreduceDtype dtype, std::size_t max_elements,
                                                            int max_iterations);

}  // namespace mgpu
