// Purpose: tests of the trial statistics (trial_interval.hpp): the variance components and the paired Fieller
// interval against values worked by hand, and the interval's coverage on simulated two-level data whose variance
// lives between trials, where the interval over the runs of all trials misses the true speedup most of the time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stats/speedup_interval.hpp"
#include "stats/trial_interval.hpp"

namespace mgpu::stats {
namespace {

TEST(VarianceComponents, MatchHandWorkedValues) {
  // Trial means 11, 22, 15; within: (1 + 1 + 4 + 0 + 4 + 0) / (6 - 3) = 10/3; harmonic mean of 2, 3, 1 runs: 18/11;
  // between: var(11, 22, 15) = 31 less (10/3) / (18/11) = 28.962962...
  const VarianceComponents c = variance_components({{10, 12}, {20, 22, 24}, {15}});
  EXPECT_EQ(c.trials, 3u);
  EXPECT_DOUBLE_EQ(c.grand_mean, 16.0);
  EXPECT_DOUBLE_EQ(c.within_trial, 10.0 / 3.0);
  EXPECT_DOUBLE_EQ(c.runs_per_trial, 18.0 / 11.0);
  EXPECT_NEAR(c.between_trials, 28.962962962962962, 1e-12);
}

TEST(VarianceComponents, BetweenIsZeroWhenTheRunsExplainTheTrialMeans) {
  const VarianceComponents c = variance_components({{1, 3}, {3, 1}, {2, 2}});
  EXPECT_DOUBLE_EQ(c.grand_mean, 2.0);
  EXPECT_DOUBLE_EQ(c.between_trials, 0.0);  // the trial means are equal
  EXPECT_DOUBLE_EQ(c.within_trial, 4.0 / 3.0);
  EXPECT_THROW(variance_components({{1, 2}}), std::invalid_argument);
  EXPECT_THROW(variance_components({{1, 2}, {}}), std::invalid_argument);
}

TEST(VarianceComponents, WithinTrialAtOneAndAtZeroDegreesOfFreedom) {
  // One degree of freedom (3 runs in 2 trials): within = ((1 - 2)^2 + (3 - 2)^2) / 1 = 2; trial means 2 and 5,
  // harmonic mean of 2 and 1 runs 4/3: between = var(2, 5) = 4.5 less 2 / (4/3) = 3.
  const VarianceComponents one_df = variance_components({{1, 3}, {5}});
  EXPECT_DOUBLE_EQ(one_df.within_trial, 2.0);
  EXPECT_DOUBLE_EQ(one_df.between_trials, 3.0);
  // None (every trial a single run): nothing to pool, within is 0 and between the trial means' variance.
  const VarianceComponents zero_df = variance_components({{1}, {3}});
  EXPECT_DOUBLE_EQ(zero_df.within_trial, 0.0);
  EXPECT_DOUBLE_EQ(zero_df.between_trials, 2.0);
}

TEST(VarianceComponents, SpreadsArePercentOfTheGrandMeanAndNanOnlyWhenItIsZero) {
  // Grand mean exactly 1: within = (0.25 + 0.25 + 0 + 0) / (4 - 2) = 0.25, so 50%; the trial means are equal, so 0%.
  const VarianceComponents one = variance_components({{0.5, 1.5}, {1, 1}});
  EXPECT_DOUBLE_EQ(one.grand_mean, 1.0);
  EXPECT_DOUBLE_EQ(one.within_sd_percent(), 50.0);
  EXPECT_DOUBLE_EQ(one.between_sd_percent(), 0.0);
  const VarianceComponents c = variance_components({{10, 12}, {20, 22, 24}, {15}});
  EXPECT_NEAR(c.between_sd_percent(), 100 * std::sqrt(28.962962962962962) / 16, 1e-9);
  const VarianceComponents zero = variance_components({{0, 0}, {0, 0}});
  EXPECT_TRUE(std::isnan(zero.within_sd_percent()));
  EXPECT_TRUE(std::isnan(zero.between_sd_percent()));
}

TEST(PairedTrialRatioInterval, MatchesHandWorkedValues) {
  // t(0.975, 4) = 2.7764451051977987; roots of (m_a² − c s_aa) θ² − 2 (m_a m_b − c s_ab) θ + (m_b² − c s_bb), c = t²/5.
  const RatioInterval r = paired_trial_ratio_interval({130, 128, 133, 129, 131}, {100, 99, 102, 100, 101});
  ASSERT_TRUE(r.has_interval);
  EXPECT_DOUBLE_EQ(r.df, 4.0);
  EXPECT_NEAR(r.ratio, 1.2968127490039838, 1e-15);
  EXPECT_NEAR(r.low, 1.2898555509161442, 1e-9);
  EXPECT_NEAR(r.high, 1.3036279402360142, 1e-9);
}

TEST(PairedTrialRatioInterval, EdgesOfTheTrialCount) {
  const RatioInterval one = paired_trial_ratio_interval({2}, {1});
  EXPECT_DOUBLE_EQ(one.ratio, 2.0);
  EXPECT_FALSE(one.has_interval);  // one trial: no variance between trials to estimate
  const RatioInterval same = paired_trial_ratio_interval({2, 2}, {1, 1});
  ASSERT_TRUE(same.has_interval);  // no spread: the ratio is known
  EXPECT_DOUBLE_EQ(same.low, 2.0);
  EXPECT_DOUBLE_EQ(same.high, 2.0);
  EXPECT_FALSE(paired_trial_ratio_interval({1, 2}, {-1, 1}).has_interval);  // denominator not away from 0
  EXPECT_THROW(paired_trial_ratio_interval({1, 2}, {1}), std::invalid_argument);
}

// A normal deviate from a fixed generator (Box-Muller over 53-bit uniforms), the same on every platform.
class Normal {
 public:
  explicit Normal(std::uint64_t seed) : engine_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(engine_() >> 11) + 1.0) * 0x1p-53;
    const double u2 = static_cast<double>(engine_() >> 11) * 0x1p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  std::mt19937_64 engine_;
};

// 2,000 jobs of T = 6 trials x 10 runs per side. Each trial pair shares a machine state (sd 1%), each trial has its
// own GEMM plan (sd 3%), each run its own noise (sd 0.5%), multiplicative; the true speedup is 1300 / 1000.
TEST(PairedTrialRatioInterval, CoversTheTrueSpeedupWhereTheVarianceLivesBetweenTrials) {
  constexpr int kJobs = 2000, kTrials = 6, kRuns = 10;
  constexpr double kOne = 1000, kMany = 1300;
  Normal normal(20261126);
  int trial_covered = 0, run_covered = 0;
  for (int job = 0; job < kJobs; ++job) {
    std::vector<double> one_means, many_means, one_runs, many_runs;
    for (int trial = 0; trial < kTrials; ++trial) {
      const double machine = 0.01 * normal();
      const double one_plan = 0.03 * normal(), many_plan = 0.03 * normal();
      double one_sum = 0, many_sum = 0;
      for (int run = 0; run < kRuns; ++run) {
        one_runs.push_back(kOne * (1 + machine + one_plan) * (1 + 0.005 * normal()));
        many_runs.push_back(kMany * (1 + machine + many_plan) * (1 + 0.005 * normal()));
        one_sum += one_runs.back();
        many_sum += many_runs.back();
      }
      one_means.push_back(one_sum / kRuns);
      many_means.push_back(many_sum / kRuns);
    }
    const RatioInterval by_trials = paired_trial_ratio_interval(many_means, one_means);
    const RatioInterval by_runs = fieller_ratio_interval(summarize_sample(many_runs), summarize_sample(one_runs));
    const double truth = kMany / kOne;
    trial_covered += by_trials.has_interval && by_trials.low <= truth && truth <= by_trials.high;
    run_covered += by_runs.has_interval && by_runs.low <= truth && truth <= by_runs.high;
  }
  const double trial_coverage = static_cast<double>(trial_covered) / kJobs;
  const double run_coverage = static_cast<double>(run_covered) / kJobs;
  EXPECT_GE(trial_coverage, 0.93);
  EXPECT_LE(trial_coverage, 0.97);
  // Treating the 60 runs as independent ignores the trials' plans: its interval is far too narrow.
  EXPECT_LT(run_coverage, 0.6);
  std::printf("coverage of the 95%% interval over %d jobs: trial means %.3f, runs %.3f\n", kJobs, trial_coverage,
              run_coverage);
}

}  // namespace
}  // namespace mgpu::stats
