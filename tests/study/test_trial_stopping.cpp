// Purpose: tests of the stopping rule of adaptive trials (trial_stopping.hpp): no stop before the minimum, a stop once
// every speedup's trial interval is narrow enough, by time, or at the most trials; and the throughput a trial counts.
#include <gtest/gtest.h>

#include <vector>

#include "study/trial_stopping.hpp"

namespace mgpu {
namespace {

// T trials of 1 and 2 GPUs with the given throughputs.
TrialStopping trials_of(const std::vector<double>& one, const std::vector<double>& two, double max_noise = 1,
                        double max_time = 0) {
  TrialStopping stopping(max_noise, max_time);
  for (std::size_t t = 0; t < one.size(); ++t) {
    stopping.add(1, one[t]);
    stopping.add(2, two[t]);
  }
  return stopping;
}

TEST(TrialStopping, NeverBeforeTheMinimumNumberOfTrials) {
  // Identical trials: the narrowest interval there is, yet two trials are not enough.
  const TrialStopping two = trials_of({100, 100}, {150, 150});
  EXPECT_EQ(two.trials(), 2);
  EXPECT_EQ(two.stop_reason(1e9), "");
}

TEST(TrialStopping, StopsWhenEverySpeedupsTrialIntervalIsWithinMaxNoise) {
  // Speedups 1.500, 1.503, 1.497: the trial interval's half-width is t(0.975, 2) x sd / sqrt(3) = 0.0075, 0.5%.
  const TrialStopping narrow = trials_of({100, 100, 100}, {150, 150.3, 149.7});
  const std::string reason = narrow.stop_reason(0);
  EXPECT_EQ(reason.rfind("noise: every speedup's trial interval within 0.5%", 0), 0u) << reason;
  EXPECT_NE(reason.find("(--max-noise 1%)"), std::string::npos) << reason;
  // Speedups 1.50, 1.53, 1.47: about 5%, not within 1%; no time limit, fewer than the most trials: go on.
  EXPECT_EQ(trials_of({100, 100, 100}, {150, 153, 147}).stop_reason(1e9), "");
  // The same within --max-noise 6.
  EXPECT_EQ(trials_of({100, 100, 100}, {150, 153, 147}, 6).stop_reason(0).rfind("noise:", 0), 0u);
  // --max-noise 0 turns the rule off.
  EXPECT_EQ(trials_of({100, 100, 100}, {150, 150, 150}, 0).stop_reason(0), "");
}

TEST(TrialStopping, EveryGpuCountMustBeNarrow) {
  TrialStopping stopping(1, 0);
  for (double four : {300.0, 330.0, 270.0}) {
    stopping.add(1, 100);
    stopping.add(2, 150);
    stopping.add(4, four);
  }
  EXPECT_EQ(stopping.stop_reason(0), "");
}

TEST(TrialStopping, StopsByTimeOnlyAfterTheMinimum) {
  const TrialStopping wide = trials_of({100, 100, 100}, {150, 153, 147}, 1, 60);
  EXPECT_EQ(wide.stop_reason(59.9), "");
  EXPECT_EQ(wide.stop_reason(60.0), "time: 60.0 s of trials, --max-time 60 s");
  EXPECT_EQ(trials_of({100, 100}, {150, 153}, 1, 60).stop_reason(1e9), "");
}

TEST(TrialStopping, StopsAtTheMostTrials) {
  std::vector<double> one(kMaxAutoTrials, 100), two;
  for (int t = 0; t < kMaxAutoTrials; ++t) two.push_back(t % 2 == 0 ? 140 : 160);
  EXPECT_EQ(trials_of(one, two).stop_reason(0), "the most trials --trials auto measures");
  one.pop_back();
  two.pop_back();
  EXPECT_EQ(trials_of(one, two).stop_reason(0), "");
}

TEST(TrialStopping, WithoutAnNGpuConfigurationTheMinimumIsEnough) {
  TrialStopping single(1, 0);
  for (int t = 0; t < kMinAutoTrials; ++t) single.add(1, 100);
  EXPECT_NE(single.stop_reason(0), "");
}

TEST(TrialStopping, ATrialsThroughputIsTheMeanOfItsUnmarkedRuns) {
  RunSummary unmarked_a, unmarked_b, marked;
  unmarked_a.samples_per_second = 100;
  unmarked_a.phases_marked = false;
  unmarked_b.samples_per_second = 110;
  unmarked_b.phases_marked = false;
  marked.samples_per_second = 50;
  marked.phases_marked = true;
  EXPECT_DOUBLE_EQ(trial_throughput({unmarked_a, marked, unmarked_b}), 105);
  // Every run marked (--timing step or phases): all count.
  EXPECT_DOUBLE_EQ(trial_throughput({marked, marked}), 50);
  EXPECT_DOUBLE_EQ(trial_throughput({}), 0);
}

}  // namespace
}  // namespace mgpu
