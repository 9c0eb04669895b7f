// Purpose: NCCL communicator set-up as nccl-tests does it: rank 0 makes the unique id, MPI hands it to the others
// (checked on arrival, unique_id.hpp), every rank joins with ncclCommInitRank.
#include "comm/nccl_communicator.hpp"

#include <cuda_runtime_api.h>

#include <exception>

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
  MGPU_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
  // A stalled job ends without unwinding (watchdog.hpp); aborting first cancels this rank's queued reductions so
  // that NCCL's proxy threads do not keep the process alive or its peers waiting.
  watchdog::add_abort_hook(this, [comm = comm_] { MGPU_NCCL_WARN(ncclCommAbort(comm)); });
}

void NcclCommunicator::check_async_error() const {
  ncclResult_t async_error = ncclSuccess;
  MGPU_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
  MGPU_NCCL_CHECK(async_error);
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
  // Finalize flushes this rank's outstanding NCCL work; Destroy then frees the local resources.
  MGPU_NCCL_WARN(ncclCommFinalize(comm_));
  MGPU_NCCL_WARN(ncclCommDestroy(comm_));
}

}  // namespace mgpu
