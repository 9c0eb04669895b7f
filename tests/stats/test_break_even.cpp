// Purpose: tests of estimate_break_even and its words on synthetic curves whose crossings, intervals and bands are
// computed by hand in the comments: monotone, crossing twice, flat within 2%, all below, all above, one batch; the
// interval's ends (closed where a bound crosses 1, open at the measured range's edges, exactly 1 counting as inside),
// points without an interval (said, never anchoring a break-even), predicted curves, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "platform/error.hpp"
#include "stats/break_even.hpp"

namespace mgpu::stats {
namespace {

// A predicted point (no interval by nature), a measured one with its interval, and a measured one without.
SpeedupPoint at(long long batch, double speedup) { return {batch, speedup, false, 0, 0, ""}; }
SpeedupPoint at(long long batch, double speedup, double low, double high) {
  return {batch, speedup, true, low, high, ""};
}
SpeedupPoint too_few(long long batch, double speedup) { return {batch, speedup, false, 0, 0, "too few runs"}; }

// batch x 2^exponent: where a line in log2(batch) reaches 1 between two measured batches.
double times_two_to(double batch, double exponent) { return batch * std::pow(2.0, exponent); }

// Monotone: 0.5, 0.9, 1.1, 1.4 at 128..1024, each ±0.05. The speedup reaches 1 halfway from 256 to 512 (their
// geometric mean, 362.04); the upper bound 0.95 -> 1.15 reaches 1 a quarter of the way (256 · 2^0.25 = 304.44), the
// lower bound 0.85 -> 1.05 three quarters (256 · 2^0.75 = 430.54).
TEST(BreakEven, AMonotoneCurveCrossesOnceWithItsInterval) {
  const BreakEven b = estimate_break_even(
      {at(128, 0.5, 0.45, 0.55), at(256, 0.9, 0.85, 0.95), at(512, 1.1, 1.05, 1.15), at(1024, 1.4, 1.35, 1.45)});
  ASSERT_EQ(b.crossings.size(), 1u);
  const Crossing& c = b.crossings[0];
  EXPECT_TRUE(c.rising);
  EXPECT_NEAR(c.batch, std::sqrt(256.0 * 512.0), 1e-9);
  ASSERT_TRUE(c.has_interval);
  EXPECT_NEAR(c.low, times_two_to(256, 0.25), 1e-9);
  EXPECT_NEAR(c.high, times_two_to(256, 0.75), 1e-9);
  EXPECT_FALSE(c.low_open);
  EXPECT_FALSE(c.high_open);
  EXPECT_EQ(c.before.global_batch, 256);
  EXPECT_EQ(c.after.global_batch, 512);
  EXPECT_EQ(break_even_kind(b), "rising");
  EXPECT_EQ(break_even_summary(b), "~362 [304, 431]");
  EXPECT_TRUE(b.bands.empty());
  EXPECT_EQ(bands_summary(b), "none");
  ASSERT_TRUE(b.faster_from.has_value());
  EXPECT_EQ(b.faster_from->global_batch, 512);
  EXPECT_EQ(describe_break_even(b),
            "break-even at global batch ~362 [304, 431], where the speedup rises through 1 between 256: 0.9 [0.85, "
            "0.95] and 512: 1.1 [1.05, 1.15]; slower from 128 to 256 (0.5 to 0.9), faster from 512 to 1024 (1.1 to "
            "1.4), up to the largest batch measured");
}

// The same bounds ±0.05 around a steeper curve (0.5 -> 1.5) give a narrower interval: the bounds cross 1 at 0.45 and
// 0.55 of the way, 2^0.1 apart instead of 2^0.5.
TEST(BreakEven, ASteepCurveGivesANarrowIntervalAFlatOneAWideOne) {
  const BreakEven steep = estimate_break_even({at(256, 0.5, 0.45, 0.55), at(512, 1.5, 1.45, 1.55)});
  const BreakEven flat = estimate_break_even({at(256, 0.9, 0.85, 0.95), at(512, 1.1, 1.05, 1.15)});
  ASSERT_TRUE(steep.crossings.at(0).has_interval);
  ASSERT_TRUE(flat.crossings.at(0).has_interval);
  EXPECT_NEAR(steep.crossings[0].high / steep.crossings[0].low, std::pow(2.0, 0.1), 1e-9);
  EXPECT_NEAR(flat.crossings[0].high / flat.crossings[0].low, std::pow(2.0, 0.5), 1e-9);
}

// Crossing twice: 0.8, 1.2, 0.8 at 8, 64, 512 (±0.02). Up at sqrt(8 · 64) = 22.63 (bounds at 0.45 and 0.55 of three
// doublings: 8 · 2^1.35, 8 · 2^1.65), down at sqrt(64 · 512) = 181.02 (the lower bound 1.18 -> 0.78 leaves 1 at 0.45,
// the upper 1.22 -> 0.82 at 0.55). Both are reported, neither chosen.
TEST(BreakEven, ACurveThatCrossesTwiceReportsBothCrossings) {
  const BreakEven b = estimate_break_even({at(8, 0.8, 0.78, 0.82), at(64, 1.2, 1.18, 1.22), at(512, 0.8, 0.78, 0.82)});
  ASSERT_EQ(b.crossings.size(), 2u);
  EXPECT_TRUE(b.crossings[0].rising);
  EXPECT_FALSE(b.crossings[1].rising);
  EXPECT_NEAR(b.crossings[0].batch, std::sqrt(8.0 * 64.0), 1e-9);
  EXPECT_NEAR(b.crossings[0].low, times_two_to(8, 1.35), 1e-9);
  EXPECT_NEAR(b.crossings[0].high, times_two_to(8, 1.65), 1e-9);
  EXPECT_NEAR(b.crossings[1].batch, std::sqrt(64.0 * 512.0), 1e-9);
  EXPECT_NEAR(b.crossings[1].low, times_two_to(64, 1.35), 1e-9);
  EXPECT_NEAR(b.crossings[1].high, times_two_to(64, 1.65), 1e-9);
  EXPECT_EQ(break_even_kind(b), "several_crossings");
  EXPECT_EQ(break_even_summary(b), "rises at ~23 [20, 25], falls at ~181 [163, 201]");
  EXPECT_FALSE(b.faster_from.has_value());  // the largest batch is slower
  EXPECT_EQ(verdicts_by_batch(b),
            "slower at 8 (0.8), faster at 64 (1.2), slower at 512 (0.8), the largest batch measured");
  EXPECT_EQ(describe_break_even(b).rfind("the speedup crosses 1 2 times: rising at ~23 [20, 25] (between 8: 0.8 [0.78, "
                                         "0.82] and 64: 1.2 [1.18, 1.22]), falling at ~181 [163, 201] (between 64: ",
                                         0),
            0u)
      << describe_break_even(b);
}

// Flat within 2%: 0.99, 1.005, 1.012, 0.995 at 128..1024, no verdict faster or slower (1.012 [1.005, 1.019] excludes
// 1 but not the 2%): one band over all four. Up at 128 · 2^(2/3) = 203.19; its interval is open below (the interval
// at 128 holds 1) and ends where the lower bound 0.99 -> 1.005 passes 1 (256 · 2^(2/3) = 406.37). Down at 512 ·
// 2^(0.012/0.017); its interval starts where the lower bound 1.005 -> 0.985 reaches 1 (512 · 2^0.25) and is open above.
TEST(BreakEven, AFlatCurveWithinTwoPercentIsABandWithWideIntervals) {
  const BreakEven b = estimate_break_even({at(128, 0.99, 0.97, 1.01), at(256, 1.005, 0.99, 1.02),
                                           at(512, 1.012, 1.005, 1.019), at(1024, 0.995, 0.985, 1.005)});
  ASSERT_EQ(b.bands.size(), 1u);
  EXPECT_EQ(b.bands[0].first.global_batch, 128);
  EXPECT_EQ(b.bands[0].last.global_batch, 1024);
  EXPECT_EQ(b.bands[0].batches, 4);
  EXPECT_DOUBLE_EQ(b.bands[0].lowest_speedup, 0.99);
  EXPECT_DOUBLE_EQ(b.bands[0].highest_speedup, 1.012);
  EXPECT_EQ(bands_summary(b), "128 to 1024 (0.99 to 1.01)");
  ASSERT_EQ(b.crossings.size(), 2u);
  const Crossing &up = b.crossings[0], &down = b.crossings[1];
  EXPECT_NEAR(up.batch, times_two_to(128, 2.0 / 3), 1e-9);
  EXPECT_TRUE(up.low_open);
  EXPECT_DOUBLE_EQ(up.low, 128);
  EXPECT_FALSE(up.high_open);
  EXPECT_NEAR(up.high, times_two_to(256, 2.0 / 3), 1e-9);
  EXPECT_NEAR(down.batch, times_two_to(512, 0.012 / 0.017), 1e-9);
  EXPECT_NEAR(down.low, times_two_to(512, 0.25), 1e-9);
  EXPECT_TRUE(down.high_open);
  EXPECT_DOUBLE_EQ(down.high, 1024);
  EXPECT_EQ(break_even_summary(b), "rises at ~203 [<128, 406], falls at ~835 [609, >1024]");
  EXPECT_EQ(verdicts_by_batch(b),
            "no clear difference from 128 to 1024 (0.99 to 1.01), up to the largest batch measured");
}

TEST(BreakEven, AllBelowOneHasNoBreakEvenInTheMeasuredRange) {
  const BreakEven b = estimate_break_even({at(8, 0.4, 0.39, 0.41), at(64, 0.6, 0.59, 0.61), at(512, 0.9, 0.89, 0.91)});
  EXPECT_TRUE(b.crossings.empty());
  EXPECT_EQ(break_even_kind(b), "below_1");
  EXPECT_EQ(break_even_summary(b), "none (speedup < 1 from 8 to 512)");
  EXPECT_EQ(describe_break_even(b),
            "no break-even in the measured range: the speedup is below 1 at every batch from 8 to 512 (the largest, "
            "512: 0.9 [0.89, 0.91]); slower from 8 to 512 (0.4 to 0.9), up to the largest batch measured");
  EXPECT_FALSE(b.faster_from.has_value());
}

TEST(BreakEven, AllAboveOneIsFasterFromTheSmallestBatch) {
  const BreakEven b = estimate_break_even({at(8, 1.1, 1.05, 1.15), at(64, 1.5, 1.45, 1.55), at(512, 1.9, 1.8, 2.0)});
  EXPECT_TRUE(b.crossings.empty());
  EXPECT_EQ(break_even_kind(b), "above_1");
  EXPECT_EQ(break_even_summary(b), "none (speedup >= 1 from 8 to 512)");
  ASSERT_TRUE(b.faster_from.has_value());
  EXPECT_EQ(b.faster_from->global_batch, 8);
  EXPECT_EQ(verdicts_by_batch(b), "faster from 8 to 512 (1.1 to 1.9), up to the largest batch measured");
}

TEST(BreakEven, OneBatchSaysItIsTheOnlyOneMeasured) {
  const BreakEven b = estimate_break_even({at(128, 1.05, 1.03, 1.07)});
  EXPECT_TRUE(b.crossings.empty());
  EXPECT_EQ(break_even_summary(b), "none (speedup >= 1 at 128, the only batch measured)");
  EXPECT_EQ(describe_break_even(b),
            "no break-even: one batch measured (128: 1.05 [1.03, 1.07]); faster at 128 (1.05), the only batch "
            "measured");
  EXPECT_EQ(estimate_break_even({}).points.size(), 0u);
  EXPECT_EQ(break_even_kind(estimate_break_even({})), "no_data");
}

// Open ends: where the interval at the smallest batch holds 1, the break-even may lie below it ("<8"); where the
// interval at the largest does, above it (">16"). The closed ends: 8 · 2^0.8 (lower bound 0.8 -> 1.05) and 8 · 2^0.2
// (upper bound 0.95 -> 1.2).
TEST(BreakEven, AnIntervalReachingTheMeasuredRangesEdgeIsOpenThere) {
  const Crossing below = estimate_break_even({at(8, 0.9, 0.8, 1.05), at(16, 1.1, 1.05, 1.2)}).crossings.at(0);
  EXPECT_TRUE(below.low_open);
  EXPECT_DOUBLE_EQ(below.low, 8);
  EXPECT_FALSE(below.high_open);
  EXPECT_NEAR(below.high, times_two_to(8, 0.8), 1e-9);
  EXPECT_EQ(crossing_text(below), "~11 [<8, 14]");
  const Crossing above = estimate_break_even({at(8, 0.9, 0.8, 0.95), at(16, 1.1, 0.95, 1.2)}).crossings.at(0);
  EXPECT_FALSE(above.low_open);
  EXPECT_NEAR(above.low, times_two_to(8, 0.2), 1e-9);
  EXPECT_TRUE(above.high_open);
  EXPECT_DOUBLE_EQ(above.high, 16);
  EXPECT_EQ(crossing_text(above), "~11 [9, >16]");
}

// An interval with an end at exactly 1 contains 1: the stretch goes on through that batch and ends in the next
// segment, where the bound leaves 1 (here at once: the end is the batch itself, 16, not open).
TEST(BreakEven, AnIntervalEndAtExactlyOneIsInside) {
  const Crossing c =
      estimate_break_even({at(8, 0.5, 0.45, 0.55), at(16, 0.9, 0.8, 1.0), at(32, 1.1, 1.05, 1.15)}).crossings.at(0);
  EXPECT_FALSE(c.low_open);
  EXPECT_NEAR(c.low, 16, 1e-9);
}

// A speedup of exactly 1 at a measured batch is a crossing there; touching 1 and turning back crosses twice there.
TEST(BreakEven, SpeedupExactlyOneIsACrossingAtThatBatch) {
  const BreakEven b = estimate_break_even({at(128, 0.8), at(256, 1.0), at(512, 1.2)});
  ASSERT_EQ(b.crossings.size(), 1u);
  EXPECT_DOUBLE_EQ(b.crossings[0].batch, 256);
  const BreakEven touch = estimate_break_even({at(128, 0.8), at(256, 1.0), at(512, 0.8)});
  ASSERT_EQ(touch.crossings.size(), 2u);
  EXPECT_DOUBLE_EQ(touch.crossings[1].batch, 256);
  EXPECT_FALSE(touch.crossings[1].rising);
}

// A point without an interval is said so in the verdicts, and a crossing whose interval would need it has none and
// names it, both beside the crossing and further along the walk.
TEST(BreakEven, APointWithoutAnIntervalNeverAnchorsABreakEvenSilently) {
  const BreakEven b = estimate_break_even({too_few(32, 0.8), at(128, 1.25, 1.2, 1.3)});
  ASSERT_EQ(b.crossings.size(), 1u);
  EXPECT_FALSE(b.crossings[0].has_interval);
  EXPECT_EQ(b.crossings[0].missing_interval, "no interval at 32: too few runs");
  EXPECT_EQ(break_even_summary(b), "~59 (no interval at 32: too few runs)");
  EXPECT_EQ(verdicts_by_batch(b), "too few runs to tell at 32, faster at 128 (1.25), the largest batch measured");
  EXPECT_NE(describe_break_even(b).find("between 32: 0.8 (too few runs) and 128: 1.25 [1.2, 1.3]"), std::string::npos)
      << describe_break_even(b);
  // The walk from the crossing (16..32) reaches 8, whose interval is missing, because the interval at 16 holds 1.
  const BreakEven far = estimate_break_even({too_few(8, 0.5), at(16, 0.9, 0.85, 1.02), at(32, 1.1, 1.05, 1.15)});
  EXPECT_FALSE(far.crossings.at(0).has_interval);
  EXPECT_EQ(far.crossings[0].missing_interval, "no interval at 8: too few runs");
  // A point without an interval ends a band: it is not known to lie within 2% of 1.
  const BreakEven split = estimate_break_even(
      {at(8, 1.0, 0.99, 1.01), too_few(16, 1.0), at(32, 1.0, 0.99, 1.01), at(64, 1.01, 0.995, 1.015)});
  ASSERT_EQ(split.bands.size(), 2u);
  EXPECT_EQ(bands_summary(split), "8 (1); 32 to 64 (1 to 1.01)");
}

// A predicted curve (no interval by nature) gets its crossings without intervals and no verdicts.
TEST(BreakEven, APredictedCurveHasCrossingsWithoutIntervals) {
  const BreakEven b = estimate_break_even({at(128, 0.5), at(256, 0.9), at(512, 1.1), at(1024, 1.4)});
  EXPECT_TRUE(b.predicted());
  ASSERT_EQ(b.crossings.size(), 1u);
  EXPECT_FALSE(b.crossings[0].has_interval);
  EXPECT_EQ(break_even_summary(b), "~362");
  EXPECT_EQ(bands_summary(b), "n/a (predicted)");
  EXPECT_EQ(verdicts_by_batch(b), "");
  EXPECT_EQ(describe_break_even(b),
            "break-even at global batch ~362, where the speedup rises through 1 between 256: 0.9 and 512: 1.1");
  EXPECT_FALSE(estimate_break_even({too_few(8, 0.5)}).predicted());
}

TEST(BreakEven, OrderOfThePointsDoesNotMatter) {
  const BreakEven b = estimate_break_even({at(512, 1.1), at(128, 0.5), at(256, 0.9)});
  ASSERT_EQ(b.crossings.size(), 1u);
  EXPECT_NEAR(b.crossings[0].batch, std::sqrt(256.0 * 512.0), 1e-9);
  EXPECT_EQ(b.points.front().global_batch, 128);
}

TEST(BreakEven, RefusesBadPoints) {
  EXPECT_THROW(estimate_break_even({at(8, 1.0), at(8, 1.1)}), UsageError);
  EXPECT_THROW(estimate_break_even({at(8, std::numeric_limits<double>::quiet_NaN())}), UsageError);
  EXPECT_THROW(estimate_break_even({at(8, std::numeric_limits<double>::infinity())}), UsageError);
  EXPECT_THROW(estimate_break_even({at(8, 0.0)}), UsageError);
  EXPECT_THROW(estimate_break_even({at(0, 1.0)}), UsageError);
}

}  // namespace
}  // namespace mgpu::stats
