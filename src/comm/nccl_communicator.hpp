// Purpose: an RAII NCCL communicator over the ranks of an MPI communicator (MPI only carries the unique id), created
// non-blocking so that no NCCL call can hold a rank past the watchdog's deadline; while it lives, the watchdog aborts
// it (ncclCommAbort) before stopping a stalled job.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <string>

#include "platform/cuda_resources.hpp"

namespace mgpu {

class NcclCommunicator {
 public:
  // Collective over `comm`: every rank must construct it at the same point. Makes `device_ordinal` the current
  // device first (the communicator is bound to the device current at initialisation). Returns once every rank has
  // joined; a rank that never joins stops the job at the watchdog's deadline, naming it.
  NcclCommunicator(MPI_Comm comm, int device_ordinal);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const noexcept { return comm_; }
  // Throws Error with NCCL's message when the communicator has failed asynchronously (a peer or the network gone);
  // polled by the bounded waits, which would otherwise only see a reduction that never finishes.
  void check_async_error() const;
  // The end of a call on this communicator (MGPU_NCCL_CALL): a call NCCL left in progress (the connections a
  // collective's first use sets up with its peers) is polled to its end under a bounded wait; a failure throws as
  // MGPU_NCCL_CHECK does.
  void finish(ncclResult_t result, const char* file, int line, const char* call) const;
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // How the unique id reached the ranks (broadcast_checked_id's text).
  const std::string& id_check() const noexcept { return id_check_; }

 private:
  // Polls the communicator's state until NCCL no longer reports it in progress; returns that state.
  ncclResult_t wait_while_in_progress(const std::string& waiting_for) const;

  ncclComm_t comm_ = nullptr;
  std::string id_check_;
  int rank_ = 0;
  int size_ = 0;
};

// Polls `event` to completion under a BoundedWait (watchdog.hpp), `nccl`'s asynchronous errors included where one is
// given: a wait on GPU work that holds collectives, which never ends when a peer has stalled.
void wait_bounded_for(const CudaEvent& event, const NcclCommunicator* nccl, const std::string& waiting_for);

}  // namespace mgpu

// A call on a non-blocking communicator (every NCCL call that names one may return ncclInProgress): checked, and
// waited for under the watchdog where NCCL has not finished it.
#define MGPU_NCCL_CALL(communicator, call) (communicator).finish((call), __FILE__, __LINE__, #call)
