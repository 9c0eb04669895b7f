// Purpose: the replicas' agreement after a configuration's runs (replica_check.hpp).
#include "comm/replica_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/watchdog.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {
namespace {

// The test hook: this rank's parameters with the lowest bit of the first one flipped, when MGPU_FAULT_REPLICA_RANK
// names this rank.
std::uint64_t hash_of_this_rank(const MpiContext& mpi, const std::vector<float>& parameters) {
  if (fault_hook_number("MGPU_FAULT_REPLICA_RANK") != mpi.rank || parameters.empty())
    return parameters_hash(parameters);
  std::vector<float> changed = parameters;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &changed[0], sizeof bits);
  bits ^= 1u;
  std::memcpy(&changed[0], &bits, sizeof bits);
  return parameters_hash(changed);
}

}  // namespace

std::uint64_t bytes_hash(const void* bytes, std::size_t size) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64 offset basis
  const auto* byte = static_cast<const unsigned char*>(bytes);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= byte[i];
    hash *= 1099511628211ull;  // FNV-1a 64 prime
  }
  return hash;
}

std::string hash_text(std::uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(hash));
  return text;
}

std::uint64_t parameters_hash(const std::vector<float>& values) {
  return bytes_hash(values.data(), values.size() * sizeof(float));
}

ReplicaCheck check_replicas(const MpiContext& mpi, const std::vector<float>& parameters) {
  const unsigned long long mine = hash_of_this_rank(mpi, parameters);
  std::vector<unsigned long long> hashes(static_cast<std::size_t>(mpi.size));
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(
      MPI_Iallgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, hashes.data(), 1, MPI_UNSIGNED_LONG_LONG, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's parameter hash (MPI_Iallgather)"));
  ReplicaCheck check;
  if (mpi.size == 1) {
    check.text = "1 rank: nothing to compare";
    return check;
  }
  for (int rank = 1; rank < mpi.size; ++rank) {
    if (hashes[rank] == hashes[0]) continue;
    check.identical = false;
    check.text = "rank " + std::to_string(rank) + "'s parameters differ from rank 0's (FNV-1a 64 " +
                 hash_text(hashes[rank]) + " against " + hash_text(hashes[0]) + ")";
    return check;
  }
  check.text = "identical on " + std::to_string(mpi.size) + " ranks (FNV-1a 64 of " +
               std::to_string(parameters.size()) + " parameters: " + hash_text(hashes[0]) + ")";
  return check;
}

}  // namespace mgpu
