// Purpose: mgpu_bench's entry point: MPI start-up, options, and the one place errors become exit codes.
#include <cstdio>

#include "benchmark_driver.hpp"
#include "build_info.hpp"
#include "error.hpp"
#include "mpi_context.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  try {
    mgpu::MpiSession session(&argc, &argv);
    mgpu::MpiContext mpi;
    try {
      mpi = mgpu::describe_mpi_job();
      const mgpu::BenchOptions options = mgpu::parse_options(argc, argv);
      if (options.show_help || options.show_version) {
        if (mpi.rank == 0) {
          if (options.show_help) std::fputs(mgpu::help_text().c_str(), stdout);
          else std::printf("mgpu_bench %s (git %s)\n", mgpu::project_version(), mgpu::git_revision());
        }
        return 0;
      }
      mgpu::run_benchmark(options, mpi);
      return 0;
    } catch (const mgpu::UsageError& e) {
      // Every rank saw the same bad input (or agreed on it): one line from rank 0, and all exit together.
      if (mpi.rank == 0) std::fprintf(stderr, "mgpu_bench: error: %s\n", e.what());
      return 1;
    } catch (const std::exception& e) {
      // Only this rank may know; the others could be waiting in a collective, so a multi-rank job is aborted.
      // The world size is asked again: `mpi` is still unset if describing the job was what failed.
      std::fprintf(stderr, "mgpu_bench: error: %s\n", e.what());
      std::fflush(stderr);
      int world_size = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &world_size);
      if (world_size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgpu_bench: error: %s\n", e.what());
    return 1;
  }
}
