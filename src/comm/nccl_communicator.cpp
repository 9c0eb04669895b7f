// Purpose: NCCL communicator set-up as nccl-tests does it (rank 0 makes the unique id, MPI hands it to the others,
// checked on arrival, unique_id.hpp), joined non-blocking and polled against the watchdog's deadline.
#include "comm/nccl_communicator.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <exception>
#include <thread>

#include "comm/fault_hooks.hpp"
#include "comm/unique_id.hpp"
#include "comm/watchdog.hpp"
#include "platform/cuda_check.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {

NcclCommunicator::NcclCommunicator(MPI_Comm comm, int device_ordinal) {
  MGPU_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  MGPU_MPI_CHECK(MPI_Comm_size(comm, &size_));
  ncclUniqueId id{};
  if (rank_ == 0) MGPU_NCCL_CHECK(ncclGetUniqueId(&id));
  id_check_ = broadcast_checked_id(&id, static_cast<int>(sizeof id), comm, "NCCL unique id");
  MGPU_CUDA_CHECK(cudaSetDevice(device_ordinal));
  stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_NCCL_INIT", rank_);
  // Why non-blocking: a blocking ncclCommInitRank waits inside NCCL, for ever, for a rank that never joins (its node
  // wedged, its network misconfigured), where no watchdog can see it. Non-blocking, the join is polled below against
  // the deadline, and the abort hook (registered first) cancels it when the job stops.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t started = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  if (comm_ != nullptr) {
    // A stalled job ends without unwinding (watchdog.hpp); aborting first cancels this rank's queued reductions so
    // that NCCL's proxy threads do not keep the process alive or its peers waiting.
    watchdog::add_abort_hook(this, [comm = comm_] { MGPU_NCCL_WARN(ncclCommAbort(comm)); });
  }
  finish(started, __FILE__, __LINE__, "ncclCommInitRankConfig(&comm_, size_, id, rank_, &config)");
}

void NcclCommunicator::check_async_error() const {
  ncclResult_t async_error = ncclSuccess;
  MGPU_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
  // In progress is not an error: NCCL is still setting up connections for a call this rank made.
  if (async_error != ncclInProgress) MGPU_NCCL_CHECK(async_error);
}

void NcclCommunicator::finish(ncclResult_t result, const char* file, int line, const char* call) const {
  if (result == ncclInProgress && comm_ != nullptr) {
    const std::string function = std::string(call).substr(0, std::string(call).find('('));
    result = wait_while_in_progress(function.rfind("ncclCommInit", 0) == 0
                                        ? "every rank to join NCCL initialisation (" + function + ")"
                                        : "the other ranks to set up NCCL's connections (" + function + ")");
  }
  if (result != ncclSuccess) throw_call_error("NCCL", file, line, call, nccl_error_message(result));
}

ncclResult_t NcclCommunicator::wait_while_in_progress(const std::string& waiting_for) const {
  BoundedWait wait(waiting_for);
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(comm_, &state);
    if (queried != ncclSuccess) return queried;
    if (state != ncclInProgress) return state;
    wait.check();
    // Set-up takes milliseconds to seconds: spin briefly for the common short case, then sleep so that a rank
    // waiting for a late peer takes no core from it.
    if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void wait_bounded_for(const CudaEvent& event, const NcclCommunicator* nccl, const std::string& waiting_for) {
  BoundedWait wait(waiting_for);
  while (!event.query()) {
    if (nccl != nullptr) nccl->check_async_error();
    wait.check();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ == nullptr) return;
  watchdog::remove_abort_hook(this);
  // Unwinding from an error: peers may never join the reductions this rank has queued, and Finalize would wait for
  // them forever (and so would the cudaFree of every buffer after it). Abort cancels them so the error can reach
  // MPI_Abort.
  if (std::uncaught_exceptions() > 0) {
    MGPU_NCCL_WARN(ncclCommAbort(comm_));
    return;
  }
  // Finalize flushes this rank's outstanding NCCL work (non-blocking: it may return in progress, polled to its end
  // under the watchdog); Destroy then frees the local resources.
  ncclResult_t finalized = ncclCommFinalize(comm_);
  if (finalized == ncclInProgress) finalized = wait_while_in_progress("every rank to finalize NCCL");
  if (finalized != ncclSuccess)
    warn_call_error("NCCL", __FILE__, __LINE__, "ncclCommFinalize(comm_)", nccl_error_message(finalized));
  MGPU_NCCL_WARN(ncclCommDestroy(comm_));
}

}  // namespace mgpu
