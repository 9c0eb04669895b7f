// Purpose: main() for GoogleTest programs run under mpiexec: MPI around the tests, gtest's report from rank 0 only
// (other ranks print just their failures, prefixed with the rank), and one exit status shared by every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <exception>

#include "platform/mpi_check.hpp"

namespace {

// On ranks other than 0: a failed assertion still shows, once, with the rank that saw it.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }

 private:
  int rank_;
};

int run_tests(int argc, char** argv) {
  // MPI errors come back as return codes, which MGPU_MPI_CHECK turns into exceptions a test can report.
  MGPU_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MGPU_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  const int failed_here = RUN_ALL_TESTS() != 0 ? 1 : 0;
  // A failure on any rank fails every rank, so mpiexec and CTest see one verdict.
  int failed_anywhere = 0;
  MGPU_MPI_CHECK(MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  return failed_anywhere;
}

}  // namespace

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Init failed\n");
    return 1;
  }
  int status = 1;
  try {
    status = run_tests(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 1);  // the other ranks may be waiting in a collective
  }
  if (MPI_Finalize() != MPI_SUCCESS) {
    std::fprintf(stderr, "MPI_Finalize failed\n");
    return 1;
  }
  return status;
}
