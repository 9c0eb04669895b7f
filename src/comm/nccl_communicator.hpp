// Purpose: an RAII NCCL communicator over the ranks of an MPI communicator (MPI only carries the unique id).
#pragma once

#include <mpi.h>
#include <nccl.h>

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
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }

 private:
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace mgpu
