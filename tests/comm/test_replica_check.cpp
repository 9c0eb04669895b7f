// Purpose: tests of the replicas' agreement under `mpiexec -n 2`: the hash, identical parameters, one differing bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/replica_check.hpp"

namespace mgpu {
namespace {

std::vector<float> sample_parameters() { return {0.5f, -1.25f, 3.0e-8f, 0.0f, 7.0f}; }

TEST(ParametersHash, IsFnv1a64OfTheBytes) {
  EXPECT_EQ(parameters_hash({}), 14695981039346656037ull);  // the offset basis: no byte hashed
  // One float of bytes 00 00 80 3f (1.0f, little-endian), hashed by hand with the FNV-1a 64 prime.
  std::uint64_t expected = 14695981039346656037ull;
  for (unsigned char byte : {0x00, 0x00, 0x80, 0x3f}) expected = (expected ^ byte) * 1099511628211ull;
  EXPECT_EQ(parameters_hash({1.0f}), expected);
}

TEST(ParametersHash, OneFlippedBitChangesIt) {
  std::vector<float> changed = sample_parameters();
  std::uint32_t bits = 0;
  std::memcpy(&bits, &changed[2], sizeof bits);
  bits ^= 1u << 7;
  std::memcpy(&changed[2], &bits, sizeof bits);
  EXPECT_NE(parameters_hash(changed), parameters_hash(sample_parameters()));
}

TEST(ReplicaCheck, IdenticalParametersAgreeOnEveryRank) {
  const MpiContext mpi = describe_mpi_job();
  const ReplicaCheck check = check_replicas(mpi, sample_parameters());
  EXPECT_TRUE(check.identical);
  EXPECT_EQ(check.text.rfind("identical on 2 ranks (FNV-1a 64 of 5 parameters: 0x", 0), 0u) << check.text;
}

TEST(ReplicaCheck, ADifferenceOnOneRankIsNamedOnEveryRank) {
  const MpiContext mpi = describe_mpi_job();
  std::vector<float> mine = sample_parameters();
  if (mpi.rank == 1) mine[4] = 7.0000005f;  // the next float above 7
  const ReplicaCheck check = check_replicas(mpi, mine);
  EXPECT_FALSE(check.identical) << "rank " << mpi.rank;
  EXPECT_EQ(check.text.rfind("rank 1's parameters differ from rank 0's (FNV-1a 64 0x", 0), 0u) << check.text;
}

TEST(ReplicaCheck, OneRankHasNothingToCompare) {
  const MpiContext self = describe_mpi_job(MPI_COMM_SELF);
  const ReplicaCheck check = check_replicas(self, sample_parameters());
  EXPECT_TRUE(check.identical);
  EXPECT_EQ(check.text, "1 rank: nothing to compare");
}

}  // namespace
}  // namespace mgpu
