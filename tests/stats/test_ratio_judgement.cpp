// Purpose: tests of the interval rule (ratio_judgement.hpp): where a ratio's interval lies against 1 and the band of
// min_effect either side of it, at its edges (values exact in binary), and without an interval.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/ratio_interval_fixture.hpp"
#include "stats/ratio_judgement.hpp"

namespace mgpu::stats {
namespace {

TEST(RatioJudgement, WhereTheIntervalLiesAgainstOneAndTheBand) {
  EXPECT_EQ(judge_ratio(interval(1.03, 1.07)), RatioJudgement::above);
  EXPECT_EQ(judge_ratio(interval(0.93, 0.97)), RatioJudgement::below);
  EXPECT_EQ(judge_ratio(interval(0.9, 1.3)), RatioJudgement::contains_one);
  EXPECT_EQ(judge_ratio(interval(1.01, 1.05)), RatioJudgement::within_band);
  EXPECT_EQ(judge_ratio(interval(0.95, 0.99)), RatioJudgement::within_band);
  EXPECT_EQ(judge_ratio(RatioInterval{}), RatioJudgement::no_interval);
  EXPECT_EQ(judge_ratio(interval(1.03, 1.07), 0.05), RatioJudgement::within_band);  // a wider band
  EXPECT_EQ(kMinimumEffect, 0.02);                                                  // the default band: the answer's 2%
}

TEST(RatioJudgement, TheBandsEdgeIsInsideItAndAnEndOnOneContainsIt) {
  EXPECT_EQ(judge_ratio(interval(1.5, 2.0), 0.5), RatioJudgement::within_band);
  EXPECT_EQ(judge_ratio(interval(std::nextafter(1.5, 2.0), 2.0), 0.5), RatioJudgement::above);
  EXPECT_EQ(judge_ratio(interval(0.25, 0.5), 0.5), RatioJudgement::within_band);
  EXPECT_EQ(judge_ratio(interval(0.25, std::nextafter(0.5, 0.0)), 0.5), RatioJudgement::below);
  EXPECT_EQ(judge_ratio(interval(1.0, 1.25), 0.5), RatioJudgement::contains_one);
  EXPECT_EQ(judge_ratio(interval(0.75, 1.0), 0.5), RatioJudgement::contains_one);
  EXPECT_EQ(judge_ratio(interval(std::nextafter(1.0, 2.0), 1.25), 0.5), RatioJudgement::within_band);
  EXPECT_EQ(judge_ratio(interval(0.75, std::nextafter(1.0, 0.0)), 0.5), RatioJudgement::within_band);
}

}  // namespace
}  // namespace mgpu::stats
