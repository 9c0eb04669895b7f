// Purpose: the run harness of the CUDA trainer (run_harness.hpp).
#include "train/run_harness.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <thread>

#include "comm/watchdog.hpp"
#include "kernels/fault_injection.cuh"
#include "platform/cuda_check.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {

void wait_sampling_clocks(const CudaEvent& last, GpuClockSampler& clocks, const NcclCommunicator* nccl,
                          const std::function<int()>& first_unfinished_step) {
  // Polled rather than cudaEventSynchronize, so the clocks are sampled while the GPU works: a reading taken before the
  // run was enqueued could catch an idle clock and flag a run as throttled that was not.
  BoundedWait wait(nccl != nullptr ? "the run's steps on the GPU (CUDA events; NCCL all-reduce)"
                                   : "the run's steps on the GPU (CUDA events)");
  wait.set_step_source(first_unfinished_step);
  for (;;) {
    clocks.sample();
    if (last.query()) break;
    if (nccl != nullptr) nccl->check_async_error();
    wait.check();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void record_run_conditions(RunRecord& record, const GpuClockSampler& clocks) {
  // Includes the CUDA context, cuBLAS's workspace and NCCL's buffers.
  std::size_t free_bytes = 0, total_bytes = 0;
  MGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  record.memory_peak_bytes = static_cast<double>(total_bytes - free_bytes);
  record.sm_clock_mhz = clocks.mean_sm_mhz();
  record.memory_clock_mhz = clocks.mean_memory_mhz();
  record.clock_samples = clocks.samples();
}

double slowest_replay_ms(cudaStream_t stream, const std::function<void(int steps)>& replay,
                         const std::function<void(const CudaEvent&)>& wait_for, MPI_Comm comm) {
  // Enough steps per span that the events' resolution (0.5 us) and the first replay's start are small beside it; the
  // lowest span, as the clocks and the L2's contents settle over the first.
  constexpr int kWarmSteps = 5;
  constexpr int kTimedSteps = 20;
  constexpr int kSpans = 3;
  replay(kWarmSteps);
  CudaEvent start;
  CudaEvent stop;
  double best = std::numeric_limits<double>::infinity();
  for (int span = 0; span < kSpans; ++span) {
    start.record(stream);
    replay(kTimedSteps);
    stop.record(stream);
    wait_for(stop);
    best = std::min(best, elapsed_ms(start, stop) / kTimedSteps);
  }
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE, MPI_MAX, comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's step replay time of GEMM tuning (MPI_Iallreduce)"));
  return best;
}

void stall_run_if_asked(int run_index, cudaStream_t stream) {
  if (fault_hook_number("MGPU_FAULT_SPIN_KERNEL_RUN") == run_index) fault_injection::launch_never_ending_kernel(stream);
}

}  // namespace mgpu
