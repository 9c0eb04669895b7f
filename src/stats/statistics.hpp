// Purpose: the statistics of docs/statistics.md ("Statistics"): mean, sample standard deviation, median, the Student-t
// confidence interval of a mean, Welch's two-sided t-test and Iglewicz & Hoaglin's modified z-scores. Distributions
// come from Boost.Math (boost::math::students_t); nothing here is a hand-written special function.
#pragma once

#include <cstddef>
#include <vector>

#include "platform/sample_median.hpp"

namespace mgpu::stats {

// docs/statistics.md: a result with fewer kept runs than this gets no interval, only its values.
inline constexpr std::size_t kMinimumRunsForInterval = 5;
// docs/statistics.md: 95% intervals.
inline constexpr double kConfidence = 0.95;
// The smallest relative change of throughput the verdicts call a difference: a speedup interval must lie wholly
// beyond 1 ± this to be called faster or slower (verdict, report page, break-even), and compare's default. Below it
// a change is not one to buy or sell GPUs on, and processes of one configuration differ by about that much
// (docs/statistics.md, "Trials").
inline constexpr double kMinimumEffect = 0.02;
// Iglewicz & Hoaglin's default cut-off for |M|.
inline constexpr double kDefaultOutlierThreshold = 3.5;

double mean(const std::vector<double>& x);
// Sample standard deviation (n - 1 in the denominator); 0 for fewer than 2 values.
double sample_sd(const std::vector<double>& x);
using mgpu::median;  // sample_median.hpp: 0 for an empty sample
// Median absolute deviation from the median (unscaled).
double median_absolute_deviation(const std::vector<double>& x);

// Quantile of Student's t with df degrees of freedom (df may be fractional, as Welch's is).
double student_t_quantile(double probability, double df);

// Summary of one sample: mean ± t(1 - (1 - confidence)/2, n - 1) · s / √n.
struct SampleSummary {
  std::size_t n = 0;
  double mean = 0;
  double sd = 0;
  double median = 0;
  double cv = 0;              // sd / mean (0 when the mean is 0)
  bool has_interval = false;  // n >= kMinimumRunsForInterval
  double half_width = 0;      // of the confidence interval, when has_interval
};
SampleSummary summarize_sample(const std::vector<double>& x, double confidence = kConfidence);

// Welch's unequal-variances t-test of mean(a) - mean(b) = 0, two-sided, with the Welch–Satterthwaite df.
struct WelchTest {
  bool valid = false;  // each sample has >= 2 values and not both variances are 0
  double t = 0;
  double df = 0;
  double p = 1;
};
WelchTest welch_test(const std::vector<double>& a, const std::vector<double>& b);
// The same from summary values (mean, sample variance, n) of each side.
WelchTest welch_test(double mean_a, double variance_a, std::size_t n_a, double mean_b, double variance_b,
                     std::size_t n_b);
// The same from two samples' summaries (mean, sd², n); not an overload of welch_test, whose vector form takes braced
// lists that would also initialise a SampleSummary.
WelchTest welch_test_of_summaries(const SampleSummary& a, const SampleSummary& b);

// M_i = 0.6745 (x_i - median) / MAD (Iglewicz & Hoaglin 1993). All zero when MAD = 0 (docs/statistics.md: then no value
// is an outlier).
std::vector<double> modified_z_scores(const std::vector<double>& x);
// keep[i] = |M_i| <= threshold.
std::vector<bool> outlier_free(const std::vector<double>& x, double threshold = kDefaultOutlierThreshold);

}  // namespace mgpu::stats
