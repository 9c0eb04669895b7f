// Purpose: the statistics of docs/statistics.md against published values: Student t quantiles (NIST/SEMATECH
// e-Handbook of Statistical Methods, table 1.3.6.7.2), Welch's test and its interval against R's t.test output for a
// published example, the t interval, and modified z-scores (Iglewicz & Hoaglin) on hand-computed data.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stats/statistics.hpp"

using namespace mgpu::stats;

namespace {

// R's documented example output (t.test(ts1, ts2), Welch two-sample test):
//   t = -1.8325, df = 17.9, p-value = 0.08356, 95 percent confidence interval: -2.1469104 0.1469104,
//   mean of x 10.4, mean of y 11.4.
const std::vector<double> kTs1 = {11, 9, 10, 11, 10, 12, 9, 11, 12, 9};
const std::vector<double> kTs2 = {11, 13, 10, 13, 12, 9, 11, 12, 12, 11};

TEST(StudentT, QuantilesMatchTheNistTable) {
  // NIST/SEMATECH e-Handbook 1.3.6.7.2, upper critical values of Student's t, column 0.975 (3 decimals).
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.228, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 100), 1.984, 5e-4);
  EXPECT_NEAR(student_t_quantile(0.95, 9), 1.833, 5e-4);
}

TEST(Sample, MeanSdMedian) {
  EXPECT_DOUBLE_EQ(mean(kTs1), 10.4);
  EXPECT_DOUBLE_EQ(mean(kTs2), 11.4);
  // Σ(x − 10.4)² = 12.4 over 9 degrees of freedom.
  EXPECT_NEAR(sample_sd(kTs1), std::sqrt(12.4 / 9), 1e-12);
  EXPECT_DOUBLE_EQ(median(kTs1), 10.5);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(sample_sd({5}), 0);
}

TEST(Sample, StudentTIntervalIsTTimesStandardError) {
  const SampleSummary s = summarize_sample(kTs1);
  ASSERT_TRUE(s.has_interval);
  EXPECT_EQ(s.n, 10u);
  // t(0.975, 9) = 2.262157 (NIST table: 2.262); s/√n = sqrt(10.4/9)/sqrt(10) = 0.339935.
  EXPECT_NEAR(s.half_width, 2.2621572 * std::sqrt(12.4 / 9) / std::sqrt(10.0), 1e-6);
  EXPECT_NEAR(s.cv, std::sqrt(12.4 / 9) / 10.4, 1e-12);
}

// CV = s / mean, whatever the mean, but 0 where the mean is 0 (no relative spread to state rather than a division by
// zero): a mean of exactly 1 divides like any other.
TEST(Sample, CoefficientOfVariationAtAMeanOfOneAndOfZero) {
  EXPECT_DOUBLE_EQ(summarize_sample({0.5, 1.5}).cv, std::sqrt(0.5));
  const SampleSummary zero = summarize_sample({-1, 1});
  EXPECT_DOUBLE_EQ(zero.mean, 0);
  EXPECT_EQ(zero.cv, 0);
}

TEST(Sample, NoIntervalBelowFiveValues) {
  // docs/statistics.md: fewer than 5 kept runs get no interval, only their values.
  const SampleSummary four = summarize_sample({1, 2, 3, 4});
  EXPECT_FALSE(four.has_interval);
  EXPECT_EQ(four.half_width, 0);
  EXPECT_DOUBLE_EQ(four.mean, 2.5);
  EXPECT_TRUE(summarize_sample({1, 2, 3, 4, 5}).has_interval);
}

TEST(Welch, MatchesRsTTestOutput) {
  const WelchTest w = welch_test(kTs1, kTs2);
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.t, -1.8325, 5e-5);
  EXPECT_NEAR(w.df, 17.9, 0.05);
  EXPECT_NEAR(w.p, 0.08356, 5e-6);
  // R's interval of the difference of means: -1 ± t(0.975, df)·SE = [-2.1469104, 0.1469104].
  const double se = std::sqrt(12.4 / 9 / 10 + 14.4 / 9 / 10);
  const double half = student_t_quantile(0.975, w.df) * se;
  EXPECT_NEAR(-1 - half, -2.1469104, 1e-6);
  EXPECT_NEAR(-1 + half, 0.1469104, 1e-6);
}

TEST(Welch, MatchesWikipediaExamples) {
  // Wikipedia, "Welch's t-test", Examples (values given to 2-3 significant digits).
  const std::vector<double> a1 = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                  21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
  const std::vector<double> a2 = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                  24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
  const WelchTest w = welch_test(a1, a2);
  EXPECT_NEAR(w.t, -2.46, 0.005);
  EXPECT_NEAR(w.df, 25.0, 0.05);
  EXPECT_NEAR(w.p, 0.021, 0.0005);
  // Unequal sizes and variances.
  const std::vector<double> b1 = {17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8};
  const std::vector<double> b2 = {21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8,
                                  20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8};
  const WelchTest w2 = welch_test(b1, b2);
  EXPECT_NEAR(w2.t, -1.57, 0.005);
  EXPECT_NEAR(w2.df, 9.9, 0.05);
  EXPECT_NEAR(w2.p, 0.149, 0.0005);
}

TEST(Welch, SymmetricAndInvalidWithoutVariance) {
  const WelchTest ab = welch_test(kTs1, kTs2), ba = welch_test(kTs2, kTs1);
  EXPECT_DOUBLE_EQ(ab.t, -ba.t);
  EXPECT_DOUBLE_EQ(ab.p, ba.p);
  // An invalid test claims nothing: t 0, no degrees of freedom, p 1.
  for (const WelchTest& invalid : {welch_test({1, 1, 1}, {2, 2, 2}), welch_test({1}, {2, 3})}) {
    EXPECT_FALSE(invalid.valid);
    EXPECT_EQ(invalid.t, 0.0);
    EXPECT_EQ(invalid.df, 0.0);
    EXPECT_EQ(invalid.p, 1.0);
  }
}

// Two samples per group, the fewest Welch's test takes (n - 1 = 1 in each df term).
// {1, 3} vs {5, 7}: means 2 and 6, variances 2 and 2, so t = -4 / sqrt(1 + 1) = -2 sqrt(2) and df = 4 / (1 + 1) = 2;
// Student's t with 2 df has the closed-form CDF 1/2 + t / (2 sqrt(2 + t^2)), so p = 1 - |t| / sqrt(2 + t^2)
// = 1 - sqrt(0.8) = 0.10557280900008414.
TEST(Welch, TwoSamplesPerGroupMatchTheClosedForm) {
  const WelchTest w = welch_test({1, 3}, {5, 7});
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.t, -2 * std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(w.df, 2.0, 1e-12);
  EXPECT_NEAR(w.p, 1 - std::sqrt(0.8), 1e-10);
}

// {1, 3} vs {4, 8}: variances of the means 1 and 4, t = -4 / sqrt(5), df = 25 / (1 + 16) = 25/17 (fractional).
// p = 0.2585321337078 from Python's standard library alone: Simpson's rule on the t density written with math.lgamma,
// after t = |t| / w^(1/df) (which leaves a smooth integrand on (0, 1]); 200000 intervals agree with 20000 to 2e-13,
// and the same integration gives the 2-df closed form above to 1e-14.
TEST(Welch, TwoSamplesPerGroupWithUnequalVariancesMatchAnIndependentIntegration) {
  const WelchTest w = welch_test({1, 3}, {4, 8});
  ASSERT_TRUE(w.valid);
  EXPECT_NEAR(w.t, -4 / std::sqrt(5.0), 1e-12);
  EXPECT_NEAR(w.df, 25.0 / 17.0, 1e-12);
  EXPECT_NEAR(w.p, 0.2585321337078, 1e-11);
  // One sample in either group: no test.
  EXPECT_FALSE(welch_test({1}, {4, 8}).valid);
  EXPECT_FALSE(welch_test({1, 3}, {4}).valid);
}

TEST(ModifiedZ, HandComputedScores) {
  // median 2.25; |x − median| = .15 .05 .05 .15 .05 6.75, MAD = median = (.05 + .15)/2 = 0.1.
  const std::vector<double> x = {2.1, 2.3, 2.2, 2.4, 2.2, 9.0};
  const std::vector<double> m = modified_z_scores(x);
  ASSERT_EQ(m.size(), x.size());
  EXPECT_NEAR(m[0], 0.6745 * -0.15 / 0.1, 1e-9);  // -1.01175
  EXPECT_NEAR(m[1], 0.6745 * 0.05 / 0.1, 1e-9);   // 0.33725
  EXPECT_NEAR(m[5], 0.6745 * 6.75 / 0.1, 1e-9);   // 45.52875
  const std::vector<bool> keep = outlier_free(x, 3.5);
  EXPECT_EQ(keep, (std::vector<bool>{true, true, true, true, true, false}));
}

TEST(ModifiedZ, ThresholdIsInclusiveAndConfigurable) {
  // median 0, MAD 1: M = 0.6745 x. x = 3.5/0.6745 sits exactly on the threshold and is kept (|M| > 3.5 excludes).
  const double edge = 3.5 / 0.6745;
  const std::vector<double> x = {-1, -1, 0, 0, 0, 1, 1, edge, 10};
  const std::vector<bool> keep = outlier_free(x, 3.5);
  EXPECT_TRUE(keep[7]);
  EXPECT_FALSE(keep[8]);
  EXPECT_FALSE(outlier_free(x, 2.0)[7]);
}

TEST(ModifiedZ, NoOutliersWhenMadIsZero) {
  // docs/statistics.md: with MAD = 0 no run is excluded, however far one lies.
  const std::vector<double> x = {5, 5, 5, 5, 1000};
  EXPECT_DOUBLE_EQ(median_absolute_deviation(x), 0);
  for (const double m : modified_z_scores(x)) EXPECT_EQ(m, 0);
  for (const bool kept : outlier_free(x)) EXPECT_TRUE(kept);
}

}  // namespace
