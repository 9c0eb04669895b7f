// Purpose: NCCL communicator set-up as nccl-tests does it (rank 0 makes the unique id, MPI hands it to the others,
// checked on arrival, unique_id.hpp), joined non-blocking and polled against the watchdog's deadline.
#include "comm/nccl_communicator.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <exception>
#include <thread>

#include "comm/startup_deadline.hpp"
#include "comm/unique_id.hpp"
#include "comm/watchdog.hpp"
#include "platform/cuda_check.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {

NcclCommunicator::NcclCommunicator(MPI_Comm comm, int device_ordinal, int max_ctas) {
  MGPU_REQUIRE(max_ctas >= 0, "NCCL CTA cap " + std::to_string(max_ctas) + " is negative");
  MGPU_MPI_CHECK(MPI_Comm_rank(comm, &rank_));
  MGPU_MPI_CHECK(MPI_Comm_size(comm, &size_));
  ncclUniqueId id{};
  if (rank_ == 0) MGPU_NCCL_CHECK(ncclGetUniqueId(&id));
  id_check_ = broadcast_checked_id(&id, static_cast<int>(sizeof id), comm, "NCCL unique id");
  MGPU_CUDA_CHECK(cudaSetDevice(device_ordinal));
  startup_deadline::begin("NCCL's initialisation");
  stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_NCCL_INIT", rank_);
  // A stalled job ends without unwinding (watchdog.hpp); aborting first cancels this rank's queued reductions (or a
  // join in progress) so that NCCL's threads do not keep the process alive or its peers waiting.
  watchdog::add_abort_hook(this, [this] { abort_all(); });
  // Why two communicators: a blocking ncclCommInitRank waits inside NCCL, for ever, for a rank that never joins (its
  // node wedged, its network misconfigured), where no watchdog sees it; so the join is non-blocking and polled
  // against the deadline. But on a non-blocking communicator every collective is handed to a thread of its own and
  // returns "in progress" (measured on 2 x H100: 320 us per all-reduce of any size), so the
  // collectives run on a blocking communicator split from the joined one, sharing its resources; the split is polled
  // the same way.
  try {
    join_and_split(id, max_ctas);
  } catch (...) {
    // No destructor runs for a constructor that throws: the half-made communicators go here.
    abort_all();
    watchdog::remove_abort_hook(this);
    throw;
  }
}

void NcclCommunicator::join_and_split(const ncclUniqueId& id, int max_ctas) {
  // The CTA cap on both: the split communicator shares the joined one's resources (its channels among them).
  const auto cap = [max_ctas](ncclConfig_t& config) {
    if (max_ctas == 0) return;
    config.maxCTAs = max_ctas;
    config.minCTAs = 1;  // NCCL starts with at least minCTAs: a cap below its default must bound both
  };
  ncclConfig_t join = NCCL_CONFIG_INITIALIZER;
  join.blocking = 0;
  cap(join);
  ncclResult_t started = ncclCommInitRankConfig(&joined_, size_, id, rank_, &join);
  if (started != ncclSuccess && started != ncclInProgress)
    throw_call_error("NCCL", __FILE__, __LINE__, "ncclCommInitRankConfig", nccl_error_message(started));
  wait_until_ready(joined_, "every rank to join NCCL initialisation (ncclCommInitRankConfig)",
                   "ncclCommInitRankConfig");
  ncclConfig_t collectives = NCCL_CONFIG_INITIALIZER;
  collectives.blocking = 1;
  collectives.splitShare = 1;
  cap(collectives);
  started = ncclCommSplit(joined_, 0, rank_, &comm_, &collectives);
  if (started != ncclSuccess && started != ncclInProgress)
    throw_call_error("NCCL", __FILE__, __LINE__, "ncclCommSplit", nccl_error_message(started));
  wait_until_ready(joined_, "every rank to split NCCL's communicator (ncclCommSplit)", "ncclCommSplit");
  wait_until_ready(comm_, "every rank to split NCCL's communicator (ncclCommSplit)", "ncclCommSplit");
}

void NcclCommunicator::wait_until_ready(ncclComm_t communicator, const std::string& waiting_for,
                                        const char* call) const {
  MGPU_REQUIRE(communicator != nullptr, std::string(call) + " gave no communicator");
  const ncclResult_t state = settled_state(communicator, waiting_for);
  if (state != ncclSuccess) throw_call_error("NCCL", __FILE__, __LINE__, call, nccl_error_message(state));
}

ncclResult_t NcclCommunicator::settled_state(ncclComm_t communicator, const std::string& waiting_for) const {
  BoundedWait wait(waiting_for);
  for (int polls = 0;; ++polls) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = ncclCommGetAsyncError(communicator, &state);
    if (queried != ncclSuccess) return queried;
    if (state != ncclInProgress) return state;
    wait.check();
    // Set-up takes milliseconds to seconds: spin briefly for the common short case, then sleep so that a rank
    // waiting for a late peer takes no core from it.
    if (polls > 100) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void NcclCommunicator::abort_all() const noexcept {
  if (comm_ != nullptr) MGPU_NCCL_WARN(ncclCommAbort(comm_));
  if (joined_ != nullptr) MGPU_NCCL_WARN(ncclCommAbort(joined_));
}

void NcclCommunicator::check_async_error() const {
  ncclResult_t async_error = ncclSuccess;
  MGPU_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
  MGPU_NCCL_CHECK(async_error);
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
  watchdog::remove_abort_hook(this);
  // Unwinding from an error: peers may never join the reductions this rank has queued, and Finalize would wait for
  // them forever (and so would the cudaFree of every buffer after it). Abort cancels them so the error can reach
  // MPI_Abort.
  if (std::uncaught_exceptions() > 0) {
    abort_all();
    return;
  }
  // Finalize flushes this rank's outstanding NCCL work; Destroy then frees the local resources. The child first: it
  // shares the joined communicator's resources.
  if (comm_ != nullptr) {
    MGPU_NCCL_WARN(ncclCommFinalize(comm_));
    MGPU_NCCL_WARN(ncclCommDestroy(comm_));
  }
  if (joined_ != nullptr) {
    ncclResult_t finalized = ncclCommFinalize(joined_);  // non-blocking: may still be in progress
    if (finalized == ncclInProgress)
      finalized = settled_state(joined_, "every rank to finalize NCCL's joined communicator");
    if (finalized != ncclSuccess)
      warn_call_error("NCCL", __FILE__, __LINE__, "ncclCommFinalize(joined_)", nccl_error_message(finalized));
    MGPU_NCCL_WARN(ncclCommDestroy(joined_));
  }
}

}  // namespace mgpu
