// Purpose: Fieller's interval for a ratio of independent means (speedup_interval.hpp): its endpoints solve Fieller's
// defining equation at the Welch–Satterthwaite df, it reduces to the textbook t interval of a mean divided by a known
// constant when the denominator has no variance (checked against R's t.test interval), it agrees with the delta
// method when both means are precise, and it is withheld when it cannot be bounded or has too few runs.
#include <gtest/gtest.h>

#include <cmath>

#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

using namespace mgpu::stats;

namespace {

TEST(Fieller, EndpointsSolveTheDefiningEquation) {
  // The synthetic scaling pair of test_report_tables: N-GPU 3520 (variance 192000, n 5) over 1-GPU 1840 (48000, 5).
  const double ma = 3520, va = 192000, mb = 1840, vb = 48000;
  const RatioInterval r = fieller_ratio_interval(ma, va, 5, mb, vb, 5);
  ASSERT_TRUE(r.has_interval);
  EXPECT_NEAR(r.ratio, 3520.0 / 1840.0, 1e-12);
  // Welch–Satterthwaite df of m_a − θ m_b at θ = ratio, by hand: R² = 3.6597353, (38400 + R²·9600)² /
  // (38400²/4 + R⁴·9600²/4) = 7.98424.
  EXPECT_NEAR(r.df, 7.98424, 1e-4);
  const double t = student_t_quantile(0.975, r.df);
  for (const double theta : {r.low, r.high}) {
    const double lhs = (ma - theta * mb) * (ma - theta * mb);
    const double rhs = t * t * (va / 5 + theta * theta * vb / 5);
    EXPECT_NEAR(lhs / rhs, 1.0, 1e-9) << theta;
  }
  EXPECT_LT(r.low, r.ratio);
  EXPECT_GT(r.high, r.ratio);
}

TEST(Fieller, ExactDenominatorGivesTheTIntervalOfTheNumerator) {
  // With v_b = 0 the set is (m_a ± t(0.975, n_a − 1)·s_a/√n_a) / m_b: the numerator's own t interval, scaled.
  // Numerator: ts1 = 11 9 10 11 10 12 9 11 12 9 (mean 10.4, variance 10.4/9, s/√n = 0.3399346); t(0.975, 9) =
  // 2.262 (NIST/SEMATECH e-Handbook table 1.3.6.7.2), so the interval is 10.4 ± 0.8397 before dividing by 2.
  const RatioInterval r = fieller_ratio_interval(10.4, 12.4 / 9, 10, 2.0, 0.0, 10);
  ASSERT_TRUE(r.has_interval);
  EXPECT_NEAR(r.df, 9, 1e-12);
  const double half = 2.262 * 0.3711843;  // the table's 3 decimals: agreement to 5e-4 · s/√n
  EXPECT_NEAR(r.low, (10.4 - half) / 2, 5e-4 * 0.38);
  EXPECT_NEAR(r.high, (10.4 + half) / 2, 5e-4 * 0.38);
  EXPECT_NEAR(r.high - r.low, summarize_sample({11, 9, 10, 11, 10, 12, 9, 11, 12, 9}).half_width, 1e-12);
}

TEST(Fieller, AgreesWithTheDeltaMethodForPreciseMeans) {
  // CV 0.1% on both sides, 50 runs each: the ratio's standard error is R·sqrt(cv_a²/n + cv_b²/n) to first order.
  const double ma = 78143, mb = 120917, sa = 78.0, sb = 121.0;
  const RatioInterval r = fieller_ratio_interval(ma, sa * sa, 50, mb, sb * sb, 50);
  ASSERT_TRUE(r.has_interval);
  const double ratio = ma / mb;
  const double se = ratio * std::sqrt((sa / ma) * (sa / ma) / 50 + (sb / mb) * (sb / mb) / 50);
  const double half = student_t_quantile(0.975, r.df) * se;
  EXPECT_NEAR(r.low, ratio - half, 1e-3 * half);
  EXPECT_NEAR(r.high, ratio + half, 1e-3 * half);
}

TEST(Fieller, WithheldWhenUnboundedOrTooFewRuns) {
  // Denominator not significantly different from 0 (m_b² < t² v_b): the confidence set is unbounded.
  EXPECT_FALSE(fieller_ratio_interval(10, 1, 5, 0.1, 5, 5).has_interval);
  // docs/statistics.md: fewer than 5 kept runs on a side, no interval; the ratio is still given.
  const RatioInterval few = fieller_ratio_interval(10, 1, 4, 5, 1, 50);
  EXPECT_FALSE(few.has_interval);
  EXPECT_DOUBLE_EQ(few.ratio, 2.0);
  // Both sides constant: the ratio is exact.
  const RatioInterval exact = fieller_ratio_interval(10, 0, 5, 5, 0, 7);
  ASSERT_TRUE(exact.has_interval);
  EXPECT_DOUBLE_EQ(exact.low, 2.0);
  EXPECT_DOUBLE_EQ(exact.high, 2.0);
  EXPECT_EQ(exact.df, 10.0);  // n_a + n_b - 2, what a pooled t test would have
  // The bound on runs holds on either side, and exactly 5 is enough.
  EXPECT_FALSE(fieller_ratio_interval(10, 1, 50, 5, 1, 4).has_interval);
  EXPECT_TRUE(fieller_ratio_interval(10, 1, 5, 5, 1, 5).has_interval);
  // A zero denominator mean: no ratio to bound.
  EXPECT_FALSE(fieller_ratio_interval(10, 1, 50, 0, 1, 50).has_interval);
}

}  // namespace
