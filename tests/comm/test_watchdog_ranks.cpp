// Purpose: the watchdog across 2 ranks (watchdog_stall_job under mpiexec): a rank that stops making progress is the
// one the stop line names, and when every rank was waiting, none is blamed; either way the job ends with status 124.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <memory>
#include <regex>
#include <string>

namespace {

struct Ended {
  int status = -1;
  std::string output;
};

Ended run_job(const std::string& mode) {
  const std::string command = std::string("'") + MGPU_MPIEXEC + "' -n 2 '" + MGPU_STALL_JOB + "' " + mode + " 2>&1";
  Ended ended;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return ended;
  std::array<char, 512> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) ended.output += buffer.data();
  const int raw = pclose(pipe.release());
  ended.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return ended;
}

}  // namespace

// Both ranks reach their deadline and send each other their notices: each hears the other, so the line names no
// rank (a rank that heard a notice and still blamed its sender would name rank 1 here).
TEST(WatchdogRanks, WhenEveryRankWaitsNoneIsBlamed) {
  const Ended ended = run_job("every-rank-waits");
  EXPECT_EQ(ended.status, 124) << ended.output;
  EXPECT_EQ(ended.output.find("Sanitizer"), std::string::npos) << ended.output;
  EXPECT_TRUE(std::regex_search(
      ended.output,
      std::regex("mgpu_bench: watchdog stopped the job: configuration 'stall_test', run 0: no rank "
                 "identified \\(every rank was waiting\\) made no progress; rank 0@[^ ]+ waited 0\\.[0-9] "
                 "s for the test's wait")))
      << ended.output;
}

// Rank 1 sleeps without a check: it sends no notice within the grace period, and rank 0 names it.
TEST(WatchdogRanks, TheRankThatStoppedIsNamed) {
  const Ended ended = run_job("rank-1-silent");
  EXPECT_EQ(ended.status, 124) << ended.output;
  EXPECT_EQ(ended.output.find("Sanitizer"), std::string::npos) << ended.output;
  EXPECT_TRUE(std::regex_search(ended.output,
                                std::regex("mgpu_bench: watchdog stopped the job: configuration 'stall_test', run 0: "
                                           "rank 1@[^ ]+ made no progress; rank 0@[^ ]+ waited 0\\.[0-9] s for the "
                                           "test's wait")))
      << ended.output;
}
