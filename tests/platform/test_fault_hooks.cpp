// Purpose: tests of the fault-injection hooks' reading (fault_hooks.hpp): unset and empty are "no hook", a number is
// read whole or not at all, and a stop hook stops the process only for its rank and occasion.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include "platform/fault_hooks.hpp"

namespace mgpu {
namespace {

TEST(FaultHooks, UnsetAndEmptyAreNoHook) {
  unsetenv("MGPU_FAULT_TEST_HOOK");
  EXPECT_EQ(fault_hook("MGPU_FAULT_TEST_HOOK"), nullptr);
  EXPECT_EQ(fault_hook_number("MGPU_FAULT_TEST_HOOK"), -1);
  setenv("MGPU_FAULT_TEST_HOOK", "", 1);
  EXPECT_EQ(fault_hook("MGPU_FAULT_TEST_HOOK"), nullptr);
  setenv("MGPU_FAULT_TEST_HOOK", "*", 1);
  EXPECT_STREQ(fault_hook("MGPU_FAULT_TEST_HOOK"), "*");
  unsetenv("MGPU_FAULT_TEST_HOOK");
}

TEST(FaultHooks, NumbersAreReadWhole) {
  setenv("MGPU_FAULT_TEST_HOOK", "0", 1);
  EXPECT_EQ(fault_hook_number("MGPU_FAULT_TEST_HOOK"), 0);
  setenv("MGPU_FAULT_TEST_HOOK", "12", 1);
  EXPECT_EQ(fault_hook_number("MGPU_FAULT_TEST_HOOK"), 12);
  for (const char* bad : {"1x", "x", "-1", " 2"}) {
    setenv("MGPU_FAULT_TEST_HOOK", bad, 1);
    EXPECT_EQ(fault_hook_number("MGPU_FAULT_TEST_HOOK"), -1) << bad;
  }
  unsetenv("MGPU_FAULT_TEST_HOOK");
}

// A child process that asks at (rank, occasion) with the hook set to "1:2": whether it stopped itself (it is then
// killed) or went on (and exited 3).
bool stops_at(int rank, long occasion) {
  const pid_t child = fork();
  if (child == 0) {
    setenv("MGPU_FAULT_TEST_STOP", "1:2", 1);
    stop_here_if_asked("MGPU_FAULT_TEST_STOP", rank, occasion);
    _exit(3);
  }
  int status = 0;
  waitpid(child, &status, WUNTRACED);
  const bool stopped = WIFSTOPPED(status);
  if (stopped) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
  } else {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  }
  return stopped;
}

TEST(FaultHooks, AStopHookStopsOnlyItsRankAtItsOccasion) {
  EXPECT_TRUE(stops_at(1, 2));
  EXPECT_FALSE(stops_at(0, 2));  // another rank
  EXPECT_FALSE(stops_at(1, 1));  // another occasion
  EXPECT_FALSE(stops_at(1, 3));
}

}  // namespace
}  // namespace mgpu
