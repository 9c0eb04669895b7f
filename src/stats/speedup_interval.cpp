// Purpose: Fieller's interval for the ratio of two independent means.
#include "stats/speedup_interval.hpp"

#include <algorithm>
#include <cmath>

namespace mgpu::stats {

RatioInterval fieller_ratio_interval(double mean_a, double variance_a, std::size_t n_a, double mean_b,
                                     double variance_b, std::size_t n_b, double confidence, std::size_t minimum_n) {
  RatioInterval r;
  if (mean_b == 0) return r;
  r.ratio = mean_a / mean_b;
  if (n_a < minimum_n || n_b < minimum_n) return r;
  const double va = variance_a / static_cast<double>(n_a);  // variance of each mean
  const double vb = variance_b / static_cast<double>(n_b);
  const double q = r.ratio;
  // Welch–Satterthwaite df of m_a − θ m_b evaluated at θ = the estimated ratio.
  const double spread = va + q * q * vb;
  if (spread <= 0) {  // both samples constant: the ratio is known exactly
    r.has_interval = true;
    r.low = r.high = q;
    r.df = static_cast<double>(n_a + n_b - 2);
    return r;
  }
  r.df = spread * spread /
         (va * va / static_cast<double>(n_a - 1) + std::pow(q, 4) * vb * vb / static_cast<double>(n_b - 1));
  const double t = student_t_quantile(1 - (1 - confidence) / 2, r.df);
  const double t2 = t * t;
  // (m_b² − t² v_b) θ² − 2 m_a m_b θ + (m_a² − t² v_a) ≤ 0
  const double a = mean_b * mean_b - t2 * vb;
  if (a <= 0) return r;  // the denominator is not significantly non-zero: the set is unbounded
  const double b = mean_a * mean_b;
  const double discriminant = t2 * (va * mean_b * mean_b + vb * mean_a * mean_a - t2 * va * vb);
  const double root = std::sqrt(std::max(0.0, discriminant));
  r.low = (b - root) / a;
  r.high = (b + root) / a;
  r.has_interval = true;
  return r;
}

RatioInterval fieller_ratio_interval(const SampleSummary& numerator, const SampleSummary& denominator,
                                     double confidence) {
  return fieller_ratio_interval(numerator.mean, numerator.sd * numerator.sd, numerator.n, denominator.mean,
                                denominator.sd * denominator.sd, denominator.n, confidence);
}

}  // namespace mgpu::stats
