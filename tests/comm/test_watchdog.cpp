// Purpose: tests of the watchdog on one process (no MPI job): the derived default timeout, a wait that ends in time,
// and the two ways a wait stops the process: its deadline (exit 124, one line naming where and what) and a pending
// SIGTERM/SIGINT (exit 128 + signal). The multi-rank cases (a stopped peer, notices) run in fault_injection_test.sh.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "comm/watchdog.hpp"
#include "platform/shutdown_signals.hpp"

namespace mgpu {
namespace {

TEST(Watchdog, DefaultTimeoutHasAFloorAndFollowsTheLongestRun) {
  EXPECT_EQ(watchdog::default_timeout_seconds(0, 2), 60.0);
  EXPECT_EQ(watchdog::default_timeout_seconds(5.9, 2), 60.0);
  EXPECT_EQ(watchdog::default_timeout_seconds(30, 2), 300.0);
  // A job of one rank waits for no peer: its floor only ends work of its own that is stuck.
  EXPECT_EQ(watchdog::default_timeout_seconds(0, 1), 600.0);
  EXPECT_EQ(watchdog::default_timeout_seconds(30, 1), 600.0);
  EXPECT_EQ(watchdog::default_timeout_seconds(70, 1), 700.0);
  // This process is a job of one rank (no set_world).
  watchdog::set_timeout_option(-1);
  watchdog::set_configuration("c");
  EXPECT_EQ(watchdog::timeout_seconds(), 600.0);
  watchdog::record_run_seconds(70);
  watchdog::record_run_seconds(7);
  EXPECT_EQ(watchdog::timeout_seconds(), 700.0);
  watchdog::set_configuration("next");  // a new configuration's runs start the history again
  EXPECT_EQ(watchdog::timeout_seconds(), 600.0);
  watchdog::set_timeout_option(0);
  EXPECT_EQ(watchdog::timeout_seconds(), 0.0);
  watchdog::set_timeout_option(2.5);
  EXPECT_EQ(watchdog::timeout_seconds(), 2.5);
}

TEST(Watchdog, AWaitThatEndsInTimeIsNotStopped) {
  watchdog::set_timeout_option(1);
  BoundedWait wait("a quick thing");
  for (int i = 0; i < 10; ++i) {
    wait.check();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  SUCCEED();
}

// A wait past its deadline: one line naming configuration, run, step, this rank and what it waited for; exit 124.
TEST(WatchdogDeathTest, AWaitPastItsDeadlineStopsTheProcess) {
  const auto stalled_wait = [] {
    watchdog::set_timeout_option(0.2);
    watchdog::set_configuration("medium_b32_n1_cuda");
    watchdog::set_run(3);
    BoundedWait wait("the run's steps on the GPU (CUDA events)");
    wait.set_step_source([] { return 7; });
    for (;;) {
      wait.check();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  };
  EXPECT_EXIT(stalled_wait(), ::testing::ExitedWithCode(watchdog::kStallExitStatus),
              "mgpu_bench: watchdog stopped the job: configuration 'medium_b32_n1_cuda', run 3, step 7: rank 0@[^ ]+ "
              "waited 0\\.[0-9] s for the run's steps on the GPU \\(CUDA events\\), which never finished");
}

// The stop handler runs first and its words end the line (rank 0: the results file marked).
TEST(WatchdogDeathTest, ThePendingSignalStopsTheNextWaitWithTheHandlersWords) {
  const auto signalled_wait = [] {
    install_shutdown_signal_handlers();
    watchdog::set_timeout_option(0);  // no deadline: only the signal can stop it
    watchdog::set_configuration("large_b32_n1_cpu");
    watchdog::set_run(1);
    watchdog::set_stop_handler([](const StopReport& report) { return "kept (" + report.reason + ")"; });
    std::raise(SIGTERM);
    BoundedWait wait("anything");
    wait.check();
  };
  EXPECT_EXIT(signalled_wait(), ::testing::ExitedWithCode(128 + SIGTERM),
              "mgpu_bench: stopped by SIGTERM: configuration 'large_b32_n1_cpu', run 1; kept \\(SIGTERM\\)");
}

TEST(ShutdownSignals, NamesTheSignals) {
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

}  // namespace
}  // namespace mgpu
