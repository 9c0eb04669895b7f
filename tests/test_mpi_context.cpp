// Purpose: tests of the MPI helpers under `mpiexec -n 2`: local ranks, agreement on errors, gathers.
#include <gtest/gtest.h>

#include "error.hpp"
#include "mpi_context.hpp"

namespace mgpu {
namespace {

TEST(MpiContext, DescribesTheJob) {
  const MpiContext mpi = describe_mpi_job();
  EXPECT_EQ(mpi.size, 2);
  EXPECT_EQ(mpi.local_size, 2);  // both ranks on this host
  EXPECT_EQ(mpi.local_rank, mpi.rank);
  EXPECT_FALSE(mpi.host.empty());
  EXPECT_NE(error_origin().find("rank " + std::to_string(mpi.rank) + "@"), std::string::npos);
  EXPECT_FALSE(mpi_library_version().empty());
}

TEST(MpiContext, AgreementPassesWhenNobodyFails) {
  const MpiContext mpi = describe_mpi_job();
  EXPECT_NO_THROW(agree_or_throw(mpi, ""));
}

// agree_or_throw(mpi, message) must throw `expected` on every rank.
void expect_agreed_error(const MpiContext& mpi, const std::string& mine, const std::string& expected) {
  try {
    agree_or_throw(mpi, mine);
    ADD_FAILURE() << "no exception on rank " << mpi.rank;
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), expected) << "rank " << mpi.rank;
  }
}

TEST(MpiContext, EveryRankThrowsTheOnlyFailingRanksMessage) {
  const MpiContext mpi = describe_mpi_job();
  expect_agreed_error(mpi, mpi.rank == 1 ? "output file 'x.h5' exists" : "", "output file 'x.h5' exists");
}

TEST(MpiContext, TheLowestFailingRankSpeaksForAll) {
  const MpiContext mpi = describe_mpi_job();
  expect_agreed_error(mpi, "rank " + std::to_string(mpi.rank) + " failed", "rank 0 failed");
}

TEST(MpiContext, AllGathersStringsAndDoubles) {
  const MpiContext mpi = describe_mpi_job();
  EXPECT_EQ(allgather_strings(mpi, std::string(mpi.rank + 1, 'a' + mpi.rank)), (std::vector<std::string>{"a", "bb"}));
  EXPECT_EQ(allgather_strings(mpi, mpi.rank == 0 ? "" : "x"), (std::vector<std::string>{"", "x"}));
  EXPECT_EQ(allgather_doubles(mpi, 10.0 * mpi.rank), (std::vector<double>{0.0, 10.0}));
}

}  // namespace
}  // namespace mgpu
