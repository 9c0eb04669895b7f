// Purpose: tests of the unique id's hand-over under `mpiexec -n 2` (unique_id.hpp): rank 0's bytes reach rank 1
// whatever rank 1 held, the check names their hash, and a byte changed on arrival (the MGPU_FAULT_ID_RANK hook) is
// refused on every rank with the same line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "comm/mpi_context.hpp"
#include "comm/replica_check.hpp"
#include "comm/unique_id.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

TEST(UniqueId, RankZerosBytesReachEveryRankAndTheirHashIsNamed) {
  const MpiContext mpi = describe_mpi_job();
  std::vector<unsigned char> id(128);
  if (mpi.rank == 0) {
    fill_random_id(id.data(), static_cast<int>(id.size()));
  } else {
    for (std::size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i);  // to be replaced
  }
  const std::vector<unsigned char> sent = id;
  const std::string text = broadcast_checked_id(id.data(), static_cast<int>(id.size()), mpi.comm, "unique id");
  EXPECT_EQ(text.rfind("128-byte unique id from rank 0, identical on 2 ranks (FNV-1a 64 0x", 0), 0u) << text;
  // Every rank holds rank 0's bytes: their hash is the one named, on both ranks.
  EXPECT_NE(text.find(hash_text(bytes_hash(id.data(), id.size()))), std::string::npos) << text;
  if (mpi.rank == 0) EXPECT_EQ(id, sent);
  const std::vector<std::string> texts = allgather_strings(mpi, text);
  EXPECT_EQ(texts[0], texts[1]);
}

TEST(UniqueId, TheRandomIdIsNotAConstant) {
  std::vector<unsigned char> a(128), b(128);
  fill_random_id(a.data(), 128);
  fill_random_id(b.data(), 128);
  EXPECT_NE(a, b);  // 2^-1024 to fail by chance
}

TEST(UniqueId, AByteChangedOnArrivalIsRefusedOnEveryRank) {
  const MpiContext mpi = describe_mpi_job();
  setenv("MGPU_FAULT_ID_RANK", "1", 1);
  std::vector<unsigned char> id(128, 7);
  std::string message;
  try {
    broadcast_checked_id(id.data(), static_cast<int>(id.size()), mpi.comm, "NCCL unique id");
  } catch (const UsageError& e) {
    message = e.what();
  }
  unsetenv("MGPU_FAULT_ID_RANK");
  EXPECT_EQ(message.rfind("rank 1 received another NCCL unique id than rank 0 sent (FNV-1a 64 0x", 0), 0u)
      << "rank " << mpi.rank << ": '" << message << "'";
}

}  // namespace
}  // namespace mgpu
