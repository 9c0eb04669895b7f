// Purpose: whether the data-parallel replicas are still one model: after a configuration's runs every rank hashes its
// parameters and the ranks compare the hashes. Every rank applies the same all-reduced gradient to the same
// initialisation, so the replicas must be bit-identical; a difference means a rank computed another update.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/mpi_context.hpp"

namespace mgpu {

// FNV-1a (64 bits) of `size` bytes: bit-identical bytes hash alike, and a single flipped bit changes it.
std::uint64_t bytes_hash(const void* bytes, std::size_t size);
// The same of the bytes of `values`.
std::uint64_t parameters_hash(const std::vector<float>& values);
// "0x0123456789abcdef": a hash as the checks print it.
std::string hash_text(std::uint64_t hash);

struct ReplicaCheck {
  bool identical = true;
  // "identical on 2 ranks (FNV-1a 64 of 6885376 parameters: 0x...)", "1 rank: nothing to compare", or
  // "rank 1's parameters differ from rank 0's (FNV-1a 64 0x... against 0x...)", naming the lowest differing rank.
  std::string text;
};

// Collective over mpi.comm (a bounded wait, watchdog.hpp): every rank gets the same answer. Test hook (docs/
// reliability.md): MGPU_FAULT_REPLICA_RANK=R makes rank R hash one flipped bit of its parameters.
ReplicaCheck check_replicas(const MpiContext& mpi, const std::vector<float>& parameters);

}  // namespace mgpu
