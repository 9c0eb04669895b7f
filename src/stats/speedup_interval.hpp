// Purpose: the interval of a ratio of two independent means (speedup, compare's throughput ratio) by Fieller's theorem
// with a Welch–Satterthwaite df (docs/statistics.md: Fieller or a bootstrap would do; we use Fieller: exact under
// normality, deterministic, no resampling). docs/statistics.md states the formula.
#pragma once

#include <cstddef>
#include <string>

#include "stats/statistics.hpp"

namespace mgpu::stats {

// Said next to every ratio interval the analyzer prints.
inline constexpr char kRatioIntervalMethod[] =
    "Fieller's interval for a ratio of independent means, Welch-Satterthwaite df at the ratio (Tamhane & Logan 2004)";

struct RatioInterval {
  double ratio = 0;           // mean_numerator / mean_denominator
  bool has_interval = false;  // both sides have >= kMinimumRunsForInterval values and the interval is bounded
  double low = 0, high = 0;
  double df = 0;  // degrees of freedom used for the t quantile
};

// Numerator and denominator each given by mean, sample variance and n. The interval is
// { θ : (m_a − θ m_b)² ≤ t² (v_a + θ² v_b) } with v = variance / n, which is bounded when the denominator mean is
// significantly non-zero (m_b² > t² v_b); otherwise has_interval is false.
// minimum_n: the fewest values a side needs for an interval (runs: kMinimumRunsForInterval; trial means: 2).
RatioInterval fieller_ratio_interval(double mean_a, double variance_a, std::size_t n_a, double mean_b,
                                     double variance_b, std::size_t n_b, double confidence = kConfidence,
                                     std::size_t minimum_n = kMinimumRunsForInterval);
// The same from the numerator's and the denominator's sample summaries (mean, sd², n).
RatioInterval fieller_ratio_interval(const SampleSummary& numerator, const SampleSummary& denominator,
                                     double confidence = kConfidence);

}  // namespace mgpu::stats
