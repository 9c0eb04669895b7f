// Purpose: tests of the interval rule (speedup_verdict.hpp): where a ratio's interval lies against 1 and the band of
// min_effect either side of it, at its edges (values exact in binary), and without an interval.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/ratio_interval_fixture.hpp"
#include "stats/speedup_verdict.hpp"

namespace mgpu::stats {
namespace {

TEST(SpeedupVerdict, WhereTheIntervalLiesAgainstOneAndTheBand) {
  EXPECT_EQ(speedup_verdict(interval(1.03, 1.07)), SpeedupVerdict::faster);
  EXPECT_EQ(speedup_verdict(interval(0.93, 0.97)), SpeedupVerdict::slower);
  EXPECT_EQ(speedup_verdict(interval(0.9, 1.3)), SpeedupVerdict::no_significant_difference);
  EXPECT_EQ(speedup_verdict(interval(1.01, 1.05)), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(interval(0.95, 0.99)), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(RatioInterval{}), SpeedupVerdict::no_interval);
  EXPECT_EQ(speedup_verdict(interval(1.03, 1.07), 0.05), SpeedupVerdict::no_clear_difference);  // a wider band
  EXPECT_EQ(kMinimumEffect, 0.02);  // the default band: the answer's 2%
}

TEST(SpeedupVerdict, TheBandsEdgeIsInsideItAndAnEndOnOneContainsIt) {
  EXPECT_EQ(speedup_verdict(interval(1.5, 2.0), 0.5), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(interval(std::nextafter(1.5, 2.0), 2.0), 0.5), SpeedupVerdict::faster);
  EXPECT_EQ(speedup_verdict(interval(0.25, 0.5), 0.5), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(interval(0.25, std::nextafter(0.5, 0.0)), 0.5), SpeedupVerdict::slower);
  EXPECT_EQ(speedup_verdict(interval(1.0, 1.25), 0.5), SpeedupVerdict::no_significant_difference);
  EXPECT_EQ(speedup_verdict(interval(0.75, 1.0), 0.5), SpeedupVerdict::no_significant_difference);
  EXPECT_EQ(speedup_verdict(interval(std::nextafter(1.0, 2.0), 1.25), 0.5), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(interval(0.75, std::nextafter(1.0, 0.0)), 0.5), SpeedupVerdict::no_clear_difference);
}

// The verdict's rule at its edges: an end at exactly 1 ± 2% is inside the band.
TEST(SpeedupVerdict, TheTwoPercentEdgesBelongToTheBand) {
  EXPECT_EQ(speedup_verdict(true, 0.5, 0.9799), SpeedupVerdict::slower);
  EXPECT_EQ(speedup_verdict(true, 0.5, 0.98), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(true, 1.02, 1.5), SpeedupVerdict::no_clear_difference);
  EXPECT_EQ(speedup_verdict(true, 1.0201, 1.5), SpeedupVerdict::faster);
  EXPECT_EQ(speedup_verdict(true, 0.9, 1.0), SpeedupVerdict::no_significant_difference);
  EXPECT_EQ(speedup_verdict(false, 0, 0), SpeedupVerdict::no_interval);
  EXPECT_TRUE(is_no_difference(SpeedupVerdict::no_significant_difference));
  EXPECT_FALSE(is_no_difference(SpeedupVerdict::no_interval));
  EXPECT_EQ(missing_interval_reason(4), "too few runs");
  EXPECT_EQ(missing_interval_reason(5), "too noisy");
}

// Each verdict's words are distinct; without an interval they give its reason.
TEST(SpeedupVerdict, WordsNameEachVerdictAndWhyThereIsNone) {
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::faster, ""), "faster");
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::slower, ""), "slower");
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::no_significant_difference, ""), "no significant difference");
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::no_clear_difference, ""), "no clear difference");
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::no_interval, "too few runs"), "too few runs to tell");
  EXPECT_EQ(speedup_verdict_words(SpeedupVerdict::no_interval, "too noisy"), "too noisy to tell");
}

}  // namespace
}  // namespace mgpu::stats
