// Purpose: the statistics of docs/statistics.md; formulas are stated in docs/statistics.md.
#include "stats/statistics.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>

namespace mgpu::stats {

double mean(const std::vector<double>& x) {
  if (x.empty()) return 0;
  return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double sample_sd(const std::vector<double>& x) {
  if (x.size() < 2) return 0;
  const double m = mean(x);
  double sum = 0;
  for (const double v : x) sum += (v - m) * (v - m);
  return std::sqrt(sum / static_cast<double>(x.size() - 1));
}

double median_absolute_deviation(const std::vector<double>& x) {
  const double centre = median(x);
  std::vector<double> deviations;
  deviations.reserve(x.size());
  for (const double v : x) deviations.push_back(std::fabs(v - centre));
  return median(deviations);
}

double student_t_quantile(double probability, double df) {
  return boost::math::quantile(boost::math::students_t(df), probability);
}

SampleSummary summarize_sample(const std::vector<double>& x, double confidence) {
  SampleSummary s;
  s.n = x.size();
  s.mean = mean(x);
  s.sd = sample_sd(x);
  s.median = median(x);
  s.cv = s.mean != 0 ? s.sd / s.mean : 0;
  s.has_interval = s.n >= kMinimumRunsForInterval;
  if (s.has_interval) {
    const double t = student_t_quantile(1 - (1 - confidence) / 2, static_cast<double>(s.n - 1));
    s.half_width = t * s.sd / std::sqrt(static_cast<double>(s.n));
  }
  return s;
}

WelchTest welch_test(double mean_a, double variance_a, std::size_t n_a, double mean_b, double variance_b,
                     std::size_t n_b) {
  WelchTest w;
  if (n_a < 2 || n_b < 2) return w;
  const double va = variance_a / static_cast<double>(n_a);  // variance of each mean
  const double vb = variance_b / static_cast<double>(n_b);
  if (va + vb <= 0) return w;
  w.valid = true;
  w.t = (mean_a - mean_b) / std::sqrt(va + vb);
  w.df = (va + vb) * (va + vb) / (va * va / static_cast<double>(n_a - 1) + vb * vb / static_cast<double>(n_b - 1));
  // Two-sided: twice the upper tail of |t|; the complement keeps precision for tiny p.
  w.p = 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(w.df), std::fabs(w.t)));
  return w;
}

WelchTest welch_test_of_summaries(const SampleSummary& a, const SampleSummary& b) {
  return welch_test(a.mean, a.sd * a.sd, a.n, b.mean, b.sd * b.sd, b.n);
}

WelchTest welch_test(const std::vector<double>& a, const std::vector<double>& b) {
  const double sa = sample_sd(a), sb = sample_sd(b);
  return welch_test(mean(a), sa * sa, a.size(), mean(b), sb * sb, b.size());
}

std::vector<double> modified_z_scores(const std::vector<double>& x) {
  const double centre = median(x);
  const double mad = median_absolute_deviation(x);
  std::vector<double> scores(x.size(), 0.0);
  if (mad > 0)
    for (std::size_t i = 0; i < x.size(); ++i) scores[i] = 0.6745 * (x[i] - centre) / mad;
  return scores;
}

std::vector<bool> outlier_free(const std::vector<double>& x, double threshold) {
  const std::vector<double> scores = modified_z_scores(x);
  std::vector<bool> keep(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) keep[i] = std::fabs(scores[i]) <= threshold;
  return keep;
}

}  // namespace mgpu::stats
