// Purpose: the stopping rule of a configuration's runs (src/study/run_stopping.hpp): no stop before an interval
// exists (counting the runs the outlier screen keeps), the noise rule's threshold (max_noise / sqrt 2) and its minimum
// of runs, the time rule, and interleaved timing's marked run.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/statistics.hpp"
#include "study/run_stopping.hpp"

namespace {

using mgpu::RunSummary;
using mgpu::stop_reason;
using mgpu::StopRule;

// `count` throughput runs alternating 100 - d and 100 + d samples/s (no marked run).
std::vector<RunSummary> runs_around_100(int count, double d) {
  std::vector<RunSummary> runs(count);
  for (int i = 0; i < count; ++i) {
    runs[i].samples_per_second = i % 2 == 0 ? 100 - d : 100 + d;
    runs[i].phases_marked = false;
  }
  return runs;
}

// The relative 95% half-width, in percent, of runs_around_100(count, d).
double half_width_percent(int count, double d) {
  std::vector<double> x;
  for (const RunSummary& run : runs_around_100(count, d)) x.push_back(run.samples_per_second);
  return mgpu::stats::summarize_sample(x).half_width;  // the mean is 100
}

TEST(RunStopping, NothingStopsBeforeTheRunsHaveAnInterval) {
  const StopRule rule{1.0, 1.0, false};
  EXPECT_EQ(stop_reason(rule, runs_around_100(mgpu::stats::kMinimumRunsForInterval - 1, 0.0), 1e9), "");
  EXPECT_EQ(stop_reason(rule, runs_around_100(mgpu::stats::kMinimumRunsForInterval, 0.0), 1e9).rfind("time: ", 0), 0u);
}

// A run the outlier screen drops does not count: five runs with one far off have four kept, and no interval yet.
TEST(RunStopping, AnOutlierIsNotCountedTowardTheInterval) {
  const StopRule rule{1.0, 1.0, false};
  auto runs = runs_around_100(mgpu::stats::kMinimumRunsForInterval, 1.0);
  runs.back().samples_per_second = 50;  // modified z far beyond 3.5
  EXPECT_EQ(stop_reason(rule, runs, 1e9), "");
  runs.push_back(runs.front());  // a fifth kept run
  EXPECT_EQ(stop_reason(rule, runs, 1e9).rfind("time: ", 0), 0u);
}

TEST(RunStopping, NoiseStopsAtMaxNoiseOverRootTwoAfterTenRuns) {
  // 10 runs: half-width = t(0.975, 9) * d * sqrt(10/9) / sqrt(10); max noise just above and below sqrt(2) times it.
  const double width = half_width_percent(mgpu::kMinimumRunsBeforeNoiseStop, 0.5);
  const double at = width * std::sqrt(2.0);
  const auto runs = runs_around_100(mgpu::kMinimumRunsBeforeNoiseStop, 0.5);
  EXPECT_EQ(stop_reason({at * 1.001, 0, false}, runs, 0).rfind("noise: the throughput's 95% half-width ", 0), 0u);
  EXPECT_EQ(stop_reason({at * 0.999, 0, false}, runs, 0), "");
  // Nine runs narrow enough do not stop: the rule needs ten.
  EXPECT_EQ(stop_reason({100, 0, false}, runs_around_100(mgpu::kMinimumRunsBeforeNoiseStop - 1, 0.5), 0), "");
  EXPECT_EQ(stop_reason({0, 0, false}, runs, 0), "");  // off
}

TEST(RunStopping, TimeStopsAtMaxTime) {
  const auto runs = runs_around_100(6, 30.0);  // wide: the noise rule cannot stop these
  EXPECT_EQ(stop_reason({1, 60, false}, runs, 59.99), "");
  EXPECT_EQ(stop_reason({1, 60, false}, runs, 60.0), "time: 60.0 s of runs, --max-time 60 s");
  EXPECT_EQ(stop_reason({1, 0, false}, runs, 1e9), "");  // no limit
}

TEST(RunStopping, InterleavedWaitsForAMarkedRunAndCountsOnlyUnmarkedOnes) {
  std::vector<RunSummary> runs = runs_around_100(6, 0.0);
  EXPECT_EQ(stop_reason({0, 1, true}, runs, 100), "");  // no marked run yet
  runs[5].phases_marked = true;                         // 5 unmarked + 1 marked
  EXPECT_EQ(stop_reason({0, 1, true}, runs, 100).rfind("time: ", 0), 0u);
  runs[4].phases_marked = true;  // 4 unmarked: no interval yet
  EXPECT_EQ(stop_reason({0, 1, true}, runs, 100), "");
}

}  // namespace
