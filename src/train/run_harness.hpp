// Purpose: what a CUDA run needs around its steps, apart from the step itself: the bounded wait that samples the GPU's
// clocks while the run executes, the run's conditions read back (memory, clocks), the timing of replayed steps that
// step-level GEMM tuning minimises (the slowest rank's), and the fault hook that stalls a run.
#pragma once

#include <mpi.h>

#include <functional>

#include "comm/nccl_communicator.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "results/run_record.hpp"

namespace mgpu {

// Waits until `last` has completed, sampling the clocks meanwhile (at least once, while the GPU still works on the
// run or right after). Bounded (watchdog.hpp): a kernel that never ends or an all-reduce whose peer is gone stops the
// job naming `first_unfinished_step`'s step; NCCL's asynchronous errors surface here too.
void wait_sampling_clocks(const CudaEvent& last, GpuClockSampler& clocks, const NcclCommunicator* nccl,
                          const std::function<int()>& first_unfinished_step);

// The run's peak memory (device memory in use now: nothing is freed during a run) and its mean clocks.
void record_run_conditions(RunRecord& record, const GpuClockSampler& clocks);

// The lowest of a few spans of `replay(steps)` on `stream` per step, after a warm-up, as the slowest rank of `comm`
// measured it (a distributed step is as slow as its slowest rank, and every rank then decides alike). `wait_for`
// waits for an event, bounded.
double slowest_replay_ms(cudaStream_t stream, const std::function<void(int steps)>& replay,
                         const std::function<void(const CudaEvent&)>& wait_for, MPI_Comm comm);

// Fault injection (docs/reliability.md): MGPU_FAULT_SPIN_KERNEL_RUN=R makes run R wait behind a kernel that never
// ends, so that a test sees the watchdog catch a rank blocked in a CUDA wait.
void stall_run_if_asked(int run_index, cudaStream_t stream);

}  // namespace mgpu
