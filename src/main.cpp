// Purpose: mgpu_bench's entry point: MPI start-up, the subcommand (first word: `allreduce`, `probe`, `replay`, else
// the training benchmark), options, and the one place errors become exit codes.
#include <cstdio>
#include <cstring>

#include "cli/options.hpp"
#include "cli/replay_options.hpp"
#include "cli/tool_options.hpp"
#include "comm/mpi_context.hpp"
#include "comm/startup_deadline.hpp"
#include "platform/build_info.hpp"
#include "platform/console_line.hpp"
#include "platform/error.hpp"
#include "platform/fault_hooks.hpp"
#include "probes/allreduce_benchmark.hpp"
#include "probes/hardware_probe.hpp"
#include "study/benchmark_driver.hpp"
#include "study/console_replay.hpp"

int main(int argc, char** argv) {
  // The deadline runs from the first instruction: MPI_Init itself waits for every rank of the job.
  mgpu::startup_deadline::arm(mgpu::timeout_before_mpi(argc, argv));
  // Fault injection (docs/reliability.md): MGPU_FAULT_STOP_BEFORE_MPI_INIT=R:0 stops rank R before MPI starts.
  mgpu::stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_MPI_INIT", mgpu::startup_deadline::rank_before_mpi());
  mgpu::startup_deadline::begin("MPI start (MPI_Init)");
  try {
    mgpu::MpiSession session(&argc, &argv);
    mgpu::MpiContext mpi;
    try {
      mpi = mgpu::describe_mpi_job();
      // MPI is up; what follows begins phases of its own (run_benchmark) or bounds its own waits (the subcommands).
      mgpu::startup_deadline::finished();
      // The measurement subcommands take the rest of the command line as their own.
      const char* const subcommand = argc > 1 ? argv[1] : "";
      if (std::strcmp(subcommand, "allreduce") == 0) {
        const mgpu::AllreduceOptions options = mgpu::parse_allreduce_options(argc - 1, argv + 1);
        if (options.show_help) {
          if (mpi.rank == 0) std::fputs(mgpu::allreduce_help_text().c_str(), stdout);
          return 0;
        }
        mgpu::run_allreduce_benchmark(options, mpi);
        return 0;
      }
      if (std::strcmp(subcommand, "probe") == 0) {
        const mgpu::ProbeOptions options = mgpu::parse_probe_options(argc - 1, argv + 1);
        if (options.show_help) {
          if (mpi.rank == 0) std::fputs(mgpu::probe_help_text().c_str(), stdout);
          return 0;
        }
        mgpu::run_hardware_probe(options, mpi);
        return 0;
      }
      if (std::strcmp(subcommand, "replay") == 0) {
        const mgpu::ReplayOptions options = mgpu::parse_replay_options(argc - 1, argv + 1);
        if (mpi.rank == 0) {
          if (options.show_help)
            std::fputs(mgpu::replay_help_text().c_str(), stdout);
          else
            mgpu::replay_console(stdout, options.path);
        }
        return 0;
      }
      const mgpu::BenchOptions options = mgpu::parse_options(argc, argv);
      if (options.show_help || options.show_version) {
        if (mpi.rank == 0) {
          if (options.show_help)
            std::fputs(mgpu::help_text().c_str(), stdout);
          else
            std::printf("mgpu_bench %s (git %s)\n", mgpu::project_version(), mgpu::git_revision());
        }
        return 0;
      }
      mgpu::run_benchmark(options, mpi);
      return 0;
    } catch (const mgpu::UsageError& e) {
      // Every rank saw the same bad input (or agreed on it): one line from rank 0, and all exit together.
      if (mpi.rank == 0) std::fprintf(stderr, "%smgpu_bench: error: %s\n", mgpu::message_start(), e.what());
      return 1;
    } catch (const std::exception& e) {
      // Only this rank may know; the others could be waiting in a collective, so a multi-rank job is aborted.
      // The world size is asked again: `mpi` is still unset if describing the job was what failed.
      std::fprintf(stderr, "%smgpu_bench: error: %s\n", mgpu::message_start(), e.what());
      std::fflush(stderr);
      int world_size = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &world_size);
      if (world_size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%smgpu_bench: error: %s\n", mgpu::message_start(), e.what());
    return 1;
  }
}
