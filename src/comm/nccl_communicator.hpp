// Purpose: an RAII NCCL communicator over the ranks of an MPI communicator (MPI only carries the unique id); while it
// lives, the watchdog aborts it (ncclCommAbort) before stopping a stalled job.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <string>

namespace mgpu {

class NcclCommunicator {
 public:
  // Collective over `comm`: every rank must construct it at the same point. Makes `device_ordinal` the current
  // device first (the communicator is bound to the device current at initialisation).
  NcclCommunicator(MPI_Comm comm, int device_ordinal);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  ncclComm_t get() const noexcept { return comm_; }
  // Throws Error with NCCL's message when the communicator has failed asynchronously (a peer or the network gone);
  // polled by the bounded waits, which would otherwise only see a reduction that never finishes.
  void check_async_error() const;
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // How the unique id reached the ranks (broadcast_checked_id's text).
  const std::string& id_check() const noexcept { return id_check_; }

 private:
  ncclComm_t comm_ = nullptr;
  std::string id_check_;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace mgpu
