// Purpose: tests of the start-up deadline on one process: a stretch outside any wait past the limit ends the process
// (exit 124, one line naming the rank and the phase), a wait or the end of start-up holds it off, a limit of 0 never
// fires, an unanswered SIGTERM ends the process after its grace, and the rank is read from the launcher's
// environment before MPI. The job-level cases (a rank stopped at fork, in MPI_Init, in set-up, in its first run) run
// in startup_faults_test.sh.
#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include "comm/startup_deadline.hpp"
#include "comm/watchdog.hpp"
#include "platform/shutdown_signals.hpp"

namespace mgpu {
namespace {

void sleep_seconds(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

TEST(StartupDeadlineDeathTest, AStretchPastTheLimitEndsTheProcessNamingRankAndPhase) {
  const auto stuck = [] {
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);  // rank 3 of 4: acts 3 staggers after its limit
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    startup_deadline::arm(0.3);
    startup_deadline::begin("MPI start (MPI_Init)");
    sleep_seconds(0.3 + 3 * startup_deadline::kStaggerSeconds - 1.0);
    std::fprintf(stderr, "within its stagger\n");
    sleep_seconds(5);
    std::exit(0);
  };
  EXPECT_EXIT(
      stuck(), ::testing::ExitedWithCode(watchdog::kStallExitStatus),
      "^within its stagger\nmgpu_bench: watchdog stopped the job: rank 3@[^ ]+ was held (7\\.[89]|8\\.[0-9]) s in MPI "
      "start \\(MPI_Init\\) \\(limit 0\\.3 s, --timeout\\) by MPI_Init.*nothing was measured\n$");
}

TEST(StartupDeadlineDeathTest, AWaitHoldsTheDeadlineOffAndItsEndRestartsIt) {
  const auto waiting = [] {
    startup_deadline::arm(0.6);
    startup_deadline::set_rank(0, 2, "rank 1@node");
    startup_deadline::begin("NCCL's initialisation");
    startup_deadline::wait_started();
    sleep_seconds(1.5);  // inside a wait: the wait bounds itself
    startup_deadline::wait_ended();
    sleep_seconds(0.1);  // progress at the wait's end: still within the limit
    std::fprintf(stderr, "survived the wait\n");
    sleep_seconds(5);
    std::exit(0);
  };
  EXPECT_EXIT(
      waiting(), ::testing::ExitedWithCode(watchdog::kStallExitStatus),
      "^survived the wait\nmgpu_bench: watchdog stopped the job: rank 1@node was held (0\\.[6-9]|1\\.[0-9]) s in "
      "NCCL's initialisation .*a rank stopped or lost holds it.*--resume completes the job\n$");
}

TEST(StartupDeadlineDeathTest, FinishedStartUpAndALimitOfZeroNeverFire) {
  const auto finished = [] {
    startup_deadline::arm(0.2);
    startup_deadline::begin("the first run");
    startup_deadline::finished();
    sleep_seconds(0.6);
    startup_deadline::set_limit(0);
    startup_deadline::begin("the first run");
    sleep_seconds(0.6);
    std::exit(7);
  };
  EXPECT_EXIT(finished(), ::testing::ExitedWithCode(7), "^$");
}

TEST(StartupDeadlineDeathTest, AnUnansweredSignalEndsTheProcessAfterItsGrace) {
  const auto blocked = [] {
    install_shutdown_signal_handlers();
    startup_deadline::arm(0);  // no deadline: only the signal
    startup_deadline::set_rank(0, 2, "rank 0@node");
    startup_deadline::begin("MPI shutdown (MPI_Finalize)");
    std::raise(SIGTERM);
    sleep_seconds(startup_deadline::kSignalGraceSeconds - 0.5);
    std::fprintf(stderr, "within the grace\n");
    sleep_seconds(5);
    std::exit(0);
  };
  EXPECT_EXIT(blocked(), ::testing::ExitedWithCode(128 + SIGTERM),
              "^within the grace\nmgpu_bench: stopped by SIGTERM: rank 0@node was in MPI shutdown \\(MPI_Finalize\\), "
              "which does not poll for signals");
}

// A process stopped (SIGSTOP) and continued knows it was stopped once it runs again: a stopped rank that its launcher
// continues, to kill it, must not report itself as the stalled one. (was_stopped also reads the time since the
// watching thread's last look, so it holds before that thread runs again; which thread runs first is the scheduler's
// choice, so this test pins the answer, not that order.)
TEST(StartupDeadlineDeathTest, AStopIsKnownTheMomentTheProcessRunsAgain) {
  const auto stopped = [] {
    startup_deadline::arm(0);
    sleep_seconds(0.2);  // the thread has looked at least once
    if (startup_deadline::was_stopped()) std::exit(2);
    const pid_t self = getpid();
    if (fork() == 0) {  // continues this process 3.5 s after it stopped itself
      sleep_seconds(3.5);
      kill(self, SIGCONT);
      _exit(0);
    }
    raise(SIGSTOP);
    std::exit(startup_deadline::was_stopped() ? 0 : 1);
  };
  EXPECT_EXIT(stopped(), ::testing::ExitedWithCode(0), "");
}

// A job of one rank waits for no peer: the line says the stretch was its own work's and names --timeout, and a CUDA
// tool attached to it is named as the likely cause.
TEST(StartupDeadlineDeathTest, AJobOfOneRankIsNotStoppedAsIfItWaitedForAnother) {
  const auto alone = [](bool under_tool) {
    if (under_tool) setenv("CUDA_INJECTION64_PATH", "/opt/tool/libinjection.so", 1);
    startup_deadline::arm(0.3);
    startup_deadline::set_rank(0, 1, "rank 0@node");
    startup_deadline::begin("the step's set-up (warm-up steps, graph capture, GEMM tuning)");
    sleep_seconds(5);
    std::exit(0);
  };
  EXPECT_EXIT(alone(false), ::testing::ExitedWithCode(watchdog::kStallExitStatus),
              "^mgpu_bench: watchdog stopped the job: rank 0@node was held 0\\.[3-9] s in the step's set-up \\(warm-up "
              "steps, graph capture, GEMM tuning\\) \\(limit 0\\.3 s, --timeout\\): the job has one rank, so nothing "
              "waits for another; its own work took this long; give a longer --timeout \\(0: none\\); the runs "
              "completed before are in the results file\n$");
  EXPECT_EXIT(alone(true), ::testing::ExitedWithCode(watchdog::kStallExitStatus),
              "its own work took this long under a CUDA tool \\(CUDA_INJECTION64_PATH is set\\), which slows set-up "
              "many times; give a longer --timeout");
}

// Without --timeout the default bounds every stretch: 60 s where other ranks may hold it, 600 s for one rank alone.
TEST(StartupDeadlineDeathTest, TheDefaultLimitOfAJobOfOneRankIsLonger) {
  const auto limit_of = [](const char* ranks) {
    if (ranks != nullptr)
      setenv("OMPI_COMM_WORLD_SIZE", ranks, 1);
    else
      unsetenv("OMPI_COMM_WORLD_SIZE");
    for (const char* variable : {"PMI_SIZE", "SLURM_NTASKS"}) unsetenv(variable);
    startup_deadline::arm(-1);
    std::exit(static_cast<int>(startup_deadline::limit_seconds() / 10));
  };
  EXPECT_EXIT(limit_of("2"), ::testing::ExitedWithCode(6), "");
  EXPECT_EXIT(limit_of("1"), ::testing::ExitedWithCode(60), "");
  EXPECT_EXIT(limit_of(nullptr), ::testing::ExitedWithCode(60), "");  // started without a launcher
}

TEST(StartupDeadline, TheRanksBeforeMpiComeFromTheLauncher) {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) unsetenv(variable);
  EXPECT_EQ(startup_deadline::ranks_before_mpi(), 1);
  setenv("SLURM_NTASKS", "8", 1);
  EXPECT_EQ(startup_deadline::ranks_before_mpi(), 8);
  setenv("PMI_SIZE", "0", 1);  // not a job size: the next variable is asked
  EXPECT_EQ(startup_deadline::ranks_before_mpi(), 8);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);  // Open MPI's first
  EXPECT_EQ(startup_deadline::ranks_before_mpi(), 4);
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) unsetenv(variable);
}

TEST(StartupDeadline, TheRankBeforeMpiComesFromTheLauncher) {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) unsetenv(variable);
  EXPECT_EQ(startup_deadline::rank_before_mpi(), -1);
  EXPECT_EQ(startup_deadline::rank_name_before_mpi().rfind("rank ?@", 0), 0u);
  setenv("SLURM_PROCID", "5", 1);
  EXPECT_EQ(startup_deadline::rank_before_mpi(), 5);
  setenv("PMIX_RANK", "x2", 1);  // not a number: the next variable is asked
  EXPECT_EQ(startup_deadline::rank_before_mpi(), 5);
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);  // Open MPI's first
  EXPECT_EQ(startup_deadline::rank_before_mpi(), 2);
  EXPECT_EQ(startup_deadline::rank_name_before_mpi().rfind("rank 2@", 0), 0u);
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID"}) unsetenv(variable);
}

}  // namespace
}  // namespace mgpu
