// Purpose: an RAII NCCL communicator over the ranks of an MPI communicator (MPI only carries the unique id), whose
// set-up cannot hold a rank past the watchdog's deadline; while it lives, the watchdog aborts it (ncclCommAbort)
// before stopping a stalled job.
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
  // joined; a rank that never joins stops the job at the watchdog's deadline, naming it. `max_ctas` > 0: the
  // collectives run on at most that many CTAs (ncclConfig_t::maxCTAs), leaving the other SMs to the work beside them;
  // 0: NCCL's own choice.
  NcclCommunicator(MPI_Comm comm, int device_ordinal, int max_ctas = 0);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // The communicator the collectives use: a blocking one (see the constructor for why there are two).
  ncclComm_t get() const noexcept { return comm_; }
  // Throws Error with NCCL's message when the communicator has failed asynchronously (a peer or the network gone);
  // polled by the bounded waits, which would otherwise only see a reduction that never finishes.
  void check_async_error() const;
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // How the unique id reached the ranks (broadcast_checked_id's text).
  const std::string& id_check() const noexcept { return id_check_; }

 private:
  // The non-blocking join of every rank, then the blocking communicator split from it; each polled under a bounded
  // wait.
  void join_and_split(const ncclUniqueId& id, int max_ctas);
  // Polls `communicator` while NCCL reports it in progress, under a bounded wait; throws NCCL's error if it failed.
  void wait_until_ready(ncclComm_t communicator, const std::string& waiting_for, const char* call) const;
  // The same poll, returning the state the communicator settled in (or the query's own failure) instead of throwing.
  ncclResult_t settled_state(ncclComm_t communicator, const std::string& waiting_for) const;
  // Aborts whichever communicators exist (the watchdog's hook, a failed construction, unwinding).
  void abort_all() const noexcept;

  ncclComm_t joined_ = nullptr;  // non-blocking: every rank's join, bounded
  ncclComm_t comm_ = nullptr;    // blocking, split from joined_ sharing its resources
  std::string id_check_;
  int rank_ = 0;
  int size_ = 0;
};

// Polls `event` to completion under a BoundedWait (watchdog.hpp), `nccl`'s asynchronous errors included where one is
// given: a wait on GPU work that holds collectives, which never ends when a peer has stalled.
void wait_bounded_for(const CudaEvent& event, const NcclCommunicator* nccl, const std::string& waiting_for);

}  // namespace mgpu
