// Purpose: tests of the MPI helpers under `mpiexec -n 2`: local ranks, agreement on errors, gathers.
#include <gtest/gtest.h>

#include "comm/mpi_context.hpp"
#include "platform/error.hpp"

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

TEST(MpiContext, RanksOfOneHostAreNumberedInRankOrder) {
  const std::vector<std::string> hosts{"node1", "node2", "node1", "node2", "node1"};
  const int expected[5][2] = {{0, 3}, {0, 2}, {1, 3}, {1, 2}, {2, 3}};  // local rank, ranks on the host
  for (int rank = 0; rank < 5; ++rank) {
    const HostPlacement placement = place_on_host(hosts, rank);
    EXPECT_EQ(placement.local_rank, expected[rank][0]) << "rank " << rank;
    EXPECT_EQ(placement.local_size, expected[rank][1]) << "rank " << rank;
  }
  // A name is a host only where it matches whole: "node1" and "node10" are two.
  EXPECT_EQ(place_on_host({"node1", "node10"}, 1).local_size, 1);
}

TEST(MpiContext, APlacementOverASubsetCountsOnlyItsRanks) {
  const MpiContext mpi = describe_mpi_job();
  EXPECT_EQ(place_on_host(MPI_COMM_SELF).local_size, 1);
  EXPECT_EQ(place_on_host(MPI_COMM_SELF).local_rank, 0);
  EXPECT_EQ(place_on_host(mpi.comm).local_rank, mpi.local_rank);
}

TEST(MpiContext, BoundedCollectivesReduceAndBroadcast) {
  const MpiContext mpi = describe_mpi_job();
  EXPECT_EQ(allreduce_value(mpi, 10 + mpi.rank, MPI_MIN, "a test's minimum"), 10);
  EXPECT_EQ(allreduce_value(mpi, 10 + mpi.rank, MPI_MAX, "a test's maximum"), 11);
  EXPECT_EQ(allreduce_value(mpi, 1LL << 40, MPI_SUM, "a test's sum"), 2LL << 40);
  std::vector<int> values{mpi.rank, 7 * mpi.rank};
  broadcast_from_root(mpi, values, "a test's broadcast");
  EXPECT_EQ(values, (std::vector<int>{0, 0}));
  EXPECT_NO_THROW(line_up(mpi, "a test's barrier"));
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

TEST(MpiContext, FirstRanksCommunicatorHoldsExactlyTheFirstRanks) {
  const MpiContext mpi = describe_mpi_job();
  {
    const FirstRanksCommunicator first(mpi, 1);
    EXPECT_EQ(first.member(), mpi.rank == 0);
    if (first.member()) {
      const MpiContext sub = describe_mpi_job(first.get());
      EXPECT_EQ(sub.size, 1);
      EXPECT_EQ(sub.rank, 0);
      // A collective over the sub-communicator involves only its ranks: rank 1 is not waited for.
      EXPECT_EQ(allgather_doubles(sub, 7.0), std::vector<double>{7.0});
    }
  }
  barrier(mpi, "the test's other rank", false);
  const FirstRanksCommunicator both(mpi, 2);
  ASSERT_TRUE(both.member());
  const MpiContext sub = describe_mpi_job(both.get());
  EXPECT_EQ(sub.size, 2);
  EXPECT_EQ(sub.rank, mpi.rank);  // same order as the job
  EXPECT_EQ(allgather_doubles(sub, 1.0 + mpi.rank), (std::vector<double>{1.0, 2.0}));
}

// What the sweep does when a configuration fails on its ranks: they agree among themselves, the left-out rank waits
// at the idle barrier, and the agreement over the whole job hands every rank the same message.
TEST(MpiContext, AnErrorOnTheFirstRanksReachesTheOthers) {
  const MpiContext mpi = describe_mpi_job();
  std::string error;
  {
    const FirstRanksCommunicator first(mpi, 1);
    if (first.member()) {
      const MpiContext sub = describe_mpi_job(first.get());
      try {
        agree_or_throw(sub, "--batch 8: too large");
      } catch (const UsageError& e) {
        error = e.what();
      }
    }
  }
  barrier(mpi, "the test's other rank", false);
  expect_agreed_error(mpi, error, "--batch 8: too large");
  describe_mpi_job();  // restores the rank@host origin the sub-communicator set
}

}  // namespace
}  // namespace mgpu
