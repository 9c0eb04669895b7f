// Purpose: tests of find_break_even: the log-batch interpolation against hand-computed values, the boundaries
// (speedup exactly 1, one point, always, never, a curve that pays only in the middle) and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "platform/error.hpp"
#include "stats/break_even.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {
namespace {

SpeedupPoint at(long long batch, double speedup) { return {batch, speedup, false, 0, 0}; }
SpeedupPoint at(long long batch, double speedup, double low, double high) { return {batch, speedup, true, low, high}; }

TEST(BreakEven, InterpolatesLinearlyInLogBatch) {
  // Halfway from 0.9 to 1.1: the geometric mean of the two batches.
  const BreakEven b = find_break_even({at(128, 0.5), at(256, 0.9), at(512, 1.1), at(1024, 1.4)});
  ASSERT_EQ(b.kind, BreakEven::Kind::crossing);
  EXPECT_NEAR(b.batch, std::sqrt(256.0 * 512.0), 1e-9);
  EXPECT_EQ(b.below->global_batch, 256);
  EXPECT_EQ(b.above->global_batch, 512);
  // A quarter of the way: 0.8 -> 1.2 crosses 1 at fraction 0.5; 0.9 -> 1.3 at 0.25.
  const BreakEven quarter = find_break_even({at(100, 0.9), at(10000, 1.3)});
  EXPECT_NEAR(quarter.batch, std::exp(std::log(100.0) + 0.25 * (std::log(10000.0) - std::log(100.0))), 1e-9);
}

TEST(BreakEven, SpeedupExactlyOneIsItsOwnBreakEven) {
  const BreakEven b = find_break_even({at(128, 0.8), at(256, 1.0), at(512, 1.2)});
  ASSERT_EQ(b.kind, BreakEven::Kind::crossing);
  EXPECT_EQ(b.batch, 256);
  EXPECT_EQ(b.below->global_batch, 256);
  EXPECT_EQ(b.above->global_batch, 256);
}

TEST(BreakEven, OrderOfThePointsDoesNotMatter) {
  const BreakEven b = find_break_even({at(512, 1.1), at(128, 0.5), at(256, 0.9)});
  ASSERT_EQ(b.kind, BreakEven::Kind::crossing);
  EXPECT_NEAR(b.batch, std::sqrt(256.0 * 512.0), 1e-9);
}

TEST(BreakEven, AlwaysWhenEveryBatchPaysIncludingExactlyOneAtTheSmallest) {
  const BreakEven b = find_break_even({at(8, 1.0), at(16, 1.3)});
  EXPECT_EQ(b.kind, BreakEven::Kind::always);
  EXPECT_EQ(b.above->global_batch, 8);
  EXPECT_EQ(find_break_even({at(8, 1.01)}).kind, BreakEven::Kind::always);
}

TEST(BreakEven, NeverWhenTheLargestBatchDoesNotPay) {
  const BreakEven b = find_break_even({at(8, 0.4), at(4096, 0.99)});
  EXPECT_EQ(b.kind, BreakEven::Kind::never);
  EXPECT_EQ(b.below->global_batch, 4096);
  EXPECT_EQ(find_break_even({at(8, 0.999)}).kind, BreakEven::Kind::never);
  // Paying only in the middle is not paying "from a batch on".
  EXPECT_EQ(find_break_even({at(8, 0.5), at(16, 1.2), at(32, 0.9)}).kind, BreakEven::Kind::never);
}

TEST(BreakEven, TheLastCrossingFromBelowCounts) {
  const BreakEven b = find_break_even({at(8, 1.2), at(16, 0.9), at(32, 1.1)});
  ASSERT_EQ(b.kind, BreakEven::Kind::crossing);
  EXPECT_EQ(b.below->global_batch, 16);
  EXPECT_EQ(b.above->global_batch, 32);
}

TEST(BreakEven, NoPointIsNoData) { EXPECT_EQ(find_break_even({}).kind, BreakEven::Kind::no_data); }

TEST(BreakEven, SmallestSignificantBatchNeedsTheWholeIntervalAboveOneAndPayingAfter) {
  const BreakEven b = find_break_even(
      {at(32, 0.9, 0.85, 0.95), at(64, 1.05, 0.98, 1.12), at(128, 1.2, 1.1, 1.3), at(256, 1.3, 1.2, 1.4)});
  ASSERT_TRUE(b.smallest_significant.has_value());
  EXPECT_EQ(b.smallest_significant->global_batch, 128);
  // The lower bound must clear the minimum effect (1.02): exactly 1.02 does not, just above does.
  EXPECT_EQ(kMinimumEffect, 0.02);
  const BreakEven edge = find_break_even({at(64, 1.05, 1.02, 1.1), at(128, 1.2, 1.1, 1.3)});
  EXPECT_EQ(edge.smallest_significant->global_batch, 128);
  const BreakEven within = find_break_even({at(64, 1.03, 1.01, 1.05), at(128, 1.2, 1.1, 1.3)});
  EXPECT_EQ(within.smallest_significant->global_batch, 128);
  const BreakEven beyond = find_break_even({at(64, 1.05, 1.0201, 1.1), at(128, 1.2, 1.1, 1.3)});
  EXPECT_EQ(beyond.smallest_significant->global_batch, 64);
  // Significant but followed by a batch that does not pay: not counted.
  const BreakEven middle = find_break_even({at(8, 1.5, 1.2, 1.8), at(16, 0.9, 0.8, 1.0), at(32, 1.2, 1.1, 1.3)});
  EXPECT_EQ(middle.smallest_significant->global_batch, 32);
  EXPECT_FALSE(find_break_even({at(8, 1.5), at(16, 2.0)}).smallest_significant.has_value());
  EXPECT_FALSE(find_break_even({at(8, 0.5, 0.4, 0.6)}).smallest_significant.has_value());
}

TEST(BreakEven, RefusesBadPoints) {
  EXPECT_THROW(find_break_even({at(8, 1.0), at(8, 1.1)}), UsageError);
  EXPECT_THROW(find_break_even({at(8, std::numeric_limits<double>::quiet_NaN())}), UsageError);
  EXPECT_THROW(find_break_even({at(8, std::numeric_limits<double>::infinity())}), UsageError);
  EXPECT_THROW(find_break_even({at(8, 0.0)}), UsageError);
  EXPECT_THROW(find_break_even({at(0, 1.0)}), UsageError);
}

TEST(BreakEven, SentencesNameTheNeighbours) {
  const std::string crossing = describe_break_even(find_break_even({at(256, 0.9, 0.85, 0.95), at(512, 1.1)}));
  EXPECT_NE(crossing.find("break-even at global batch ~362"), std::string::npos) << crossing;
  EXPECT_NE(crossing.find("256: 0.9 [0.85, 0.95]"), std::string::npos) << crossing;
  EXPECT_NE(crossing.find("512: 1.1"), std::string::npos) << crossing;
  EXPECT_NE(describe_break_even(find_break_even({at(8, 0.5)})).find("never in the measured range (largest batch 8"),
            std::string::npos);
  EXPECT_NE(describe_break_even(find_break_even({at(8, 1.5)})).find("every measured batch (from 8"), std::string::npos);
}

}  // namespace
}  // namespace mgpu::stats
