// Purpose: a 2-rank job that stalls as its argument says, for test_watchdog_ranks (the watchdog's notices between
// ranks can only be seen in a job that the watchdog ends): "every-rank-waits", both ranks wait past a 0.5 s deadline;
// "rank-1-silent", rank 1 stops making progress (it sleeps, never checking) while rank 0 waits past it.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "comm/mpi_context.hpp"
#include "comm/watchdog.hpp"

int main(int argc, char** argv) {
  mgpu::MpiSession session(&argc, &argv);
  const mgpu::MpiContext world = mgpu::describe_mpi_job();
  const bool rank_1_silent = argc > 1 && std::strcmp(argv[1], "rank-1-silent") == 0;
  if (world.size != 2 || (argc > 1 && !rank_1_silent && std::strcmp(argv[1], "every-rank-waits") != 0)) {
    std::fprintf(stderr, "usage: mpiexec -n 2 watchdog_stall_job every-rank-waits|rank-1-silent\n");
    return 2;
  }
  mgpu::watchdog::set_world(world);
  mgpu::watchdog::set_timeout_option(0.5);
  mgpu::watchdog::set_configuration("stall_test");
  mgpu::watchdog::set_run(0);
  MPI_Barrier(MPI_COMM_WORLD);  // both ranks start their waits together
  if (rank_1_silent && world.rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(30));  // the launcher ends it first
    return 3;
  }
  mgpu::BoundedWait wait("the test's wait");
  for (;;) {
    wait.check();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
