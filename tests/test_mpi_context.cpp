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

TEST(MpiContext, EveryRankThrowsTheLowestFailingRanksMessage) {
  const MpiContext mpi = describe_mpi_job();
  const std::string mine = mpi.rank == 1 ? "output file 'x.h5' exists" : "";
  try {
    agree_or_throw(mpi, mine);
    ADD_FAILURE() << "no exception on rank " << mpi.rank;
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "output file 'x.h5' exists");
  }
}

TEST(MpiContext, GathersStringsAndDoublesToRankZero) {
  const MpiContext mpi = describe_mpi_job();
  const std::vector<std::string> strings = gather_strings(mpi, std::string(mpi.rank + 1, 'a' + mpi.rank));
  const std::vector<double> doubles = gather_doubles(mpi, 10.0 * mpi.rank);
  if (mpi.rank == 0) {
    EXPECT_EQ(strings, (std::vector<std::string>{"a", "bb"}));
    EXPECT_EQ(doubles, (std::vector<double>{0.0, 10.0}));
  } else {
    EXPECT_TRUE(strings.empty());
    EXPECT_TRUE(doubles.empty());
  }
}

}  // namespace
}  // namespace mgpu
