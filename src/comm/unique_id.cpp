// Purpose: the unique id's hand-over and check (unique_id.hpp).
#include "comm/unique_id.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "comm/replica_check.hpp"
#include "comm/startup_deadline.hpp"
#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {
namespace {

// The test hook: MGPU_FAULT_ID_RANK names this rank (not rank 0, whose bytes are the id).
bool corrupted_here(int rank) { return rank != 0 && fault_hook_number("MGPU_FAULT_ID_RANK") == rank; }

}  // namespace

std::string broadcast_checked_id(void* id, int size, MPI_Comm comm, const std::string& what) {
  int rank = 0;
  int ranks = 1;
  MGPU_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MGPU_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  startup_deadline::begin("the " + what + "'s exchange");
  stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_ID", rank);
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Ibcast(id, size, MPI_BYTE, 0, comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "rank 0's " + what + " (MPI_Ibcast)"));
  if (corrupted_here(rank) && size > 0) static_cast<unsigned char*>(id)[0] ^= 1u;
  const unsigned long long mine = bytes_hash(id, static_cast<std::size_t>(size));
  std::vector<unsigned long long> hashes(static_cast<std::size_t>(ranks));
  MGPU_MPI_CHECK(
      MPI_Iallgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, hashes.data(), 1, MPI_UNSIGNED_LONG_LONG, comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's hash of the " + what + " (MPI_Iallgather)"));
  for (int other = 1; other < ranks; ++other) {
    if (hashes[static_cast<std::size_t>(other)] == hashes[0]) continue;
    throw UsageError("rank " + std::to_string(other) + " received another " + what + " than rank 0 sent (FNV-1a 64 " +
                     hash_text(hashes[static_cast<std::size_t>(other)]) + " against " + hash_text(hashes[0]) +
                     "): the MPI path between them changed it");
  }
  return std::to_string(size) + "-byte " + what + " from rank 0, identical on " + std::to_string(ranks) +
         " ranks (FNV-1a 64 " + hash_text(hashes[0]) + ")";
}

void fill_random_id(void* id, int size) {
  std::random_device source;
  auto* bytes = static_cast<unsigned char*>(id);
  for (int i = 0; i < size; ++i) bytes[i] = static_cast<unsigned char>(source() & 0xffu);
}

}  // namespace mgpu
