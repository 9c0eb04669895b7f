// Purpose: the start-up deadline: from main's first instruction to the end of a configuration's first run, a thread
// bounds every stretch of this rank's work that no bounded wait covers (MPI_Init, device and library set-up, GEMM
// tuning, MPI_Finalize), and acts on a SIGTERM/SIGINT that the main thread, blocked in such a call, cannot poll.
#pragma once

#include <string>

namespace mgpu {
namespace startup_deadline {

// The limit when --timeout is not given and nothing was measured yet (the watchdog's floor, watchdog.hpp).
inline constexpr double kDefaultSeconds = 60.0;
// How long a pending SIGTERM/SIGINT may go unanswered by the main thread outside any wait before the thread ends
// the process itself: a bounded wait answers within a millisecond, so this only catches a blocking call.
inline constexpr double kSignalGraceSeconds = 2.0;

// Starts the thread, before MPI_Init: `limit_seconds` > 0 bounds each stretch, 0 leaves only the signal check, < 0
// means the default: kDefaultSeconds, or watchdog::kOneRankFloorSeconds for a job of one rank (ranks_before_mpi()),
// which waits for no peer. Idempotent.
void arm(double limit_seconds);
// The limit from now on (the watchdog's: --timeout, or the derived default once runs were measured).
void set_limit(double seconds);
double limit_seconds();
// This rank and the job's number of ranks once MPI knows them, and the rank's name in the stop line ("rank 1@node3");
// before, the launcher's environment names them. Ranks that all wait for one stopped rank see their limits pass
// together: rank r acts kStaggerSeconds x min(r, kMaxStaggeredRanks) later, so that the lowest one speaks and its exit
// has the launcher end the others first. A job of one rank is told apart in the stop line: nothing it does waits for
// another rank, so a stretch past the limit is its own work's.
void set_rank(int rank, int ranks, const std::string& name);
// Open MPI's mpirun took over a second (4 x H200) to end the others after the first rank's exit.
inline constexpr double kStaggerSeconds = 2.5;
inline constexpr int kMaxStaggeredRanks = 3;

// A phase of start-up begins, in the user's terms ("MPI start (MPI_Init)"): the deadline counts from here.
void begin(const std::string& phase);
// Start-up is over (the configuration's first run finished): the thread stands by until the next begin().
void finished();
// The watchdog's own stop is under way (watchdog.hpp bounds it): the thread stands down for good.
void stand_down();

// A bounded wait starts or ends on the main thread (BoundedWait): a wait bounds itself and names the ranks it
// waited for, so the thread never acts while one runs; each start and end counts as progress.
void wait_started();
void wait_ended();

// This rank before MPI is up, from the launcher's environment (Open MPI, PMIx, Slurm); -1 without one.
int rank_before_mpi();
// The job's number of ranks before MPI is up, from the launcher's environment (Open MPI, PMI, Slurm); 1 without one
// (a process started without a launcher is a job of one rank).
int ranks_before_mpi();
// "rank R@host" (R from rank_before_mpi, "?" without one).
std::string rank_name_before_mpi();

// Whether this process was stopped (SIGSTOP) for more than 3 s at some point: a stopped rank's peers stop the
// job for it, and the SIGTERM that then continues it is the launcher's, not news for the user (watchdog.cpp).
bool was_stopped();

}  // namespace startup_deadline
}  // namespace mgpu
