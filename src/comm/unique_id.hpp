// Purpose: rank 0's unique id handed to every rank over MPI and checked on arrival, as NCCL's set-up needs it (nccl-
// tests' way: rank 0 makes the id, MPI carries it). The CPU fallback, which has no NCCL, hands a 128-byte id of rank
// 0's making over the same path, so that a job across nodes proves the path without GPUs.
#pragma once

#include <mpi.h>

#include <string>

namespace mgpu {

// Collective over `comm` (bounded waits, watchdog.hpp): rank 0's `size` bytes at `id` replace every other rank's
// (MPI_Ibcast), then the ranks compare their FNV-1a 64 of what they hold (MPI_Iallgather). Returns "128-byte NCCL
// unique id from rank 0, identical on 2 ranks (FNV-1a 64 0x...)" (`what` = "NCCL unique id"). Every rank throws the
// same UsageError when a rank holds other bytes than rank 0's, naming the lowest such rank. Test hooks (docs/
// reliability.md): MGPU_FAULT_ID_RANK=R makes rank R change one byte after it arrived; MGPU_FAULT_STOP_BEFORE_ID=R:K
// makes rank R stop itself before its K-th hand-over (from 0).
std::string broadcast_checked_id(void* id, int size, MPI_Comm comm, const std::string& what);

// `size` bytes from the operating system's random source: the CPU fallback's id (rank 0 only).
void fill_random_id(void* id, int size);

}  // namespace mgpu
