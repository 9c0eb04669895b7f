// Purpose: statistics over trials, the level where a configuration's variance lives (docs/statistics.md, "Trials"):
// each trial is an independent process of the configuration, with its own set-up and GEMM tuning, and holds runs. The
// variance components of such a two-level sample (between trials, within a trial), and the interval of a speedup from
// the trial means, paired by trial (a 1-GPU trial and its N-GPU trial run next to each other), by Fieller's theorem
// with T - 1 degrees of freedom (Kalibera & Jones 2013 repeat at the level where the variance lives).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

// One-way random-effects estimates from trials of runs (each trial at least one run; two or more trials).
struct VarianceComponents {
  std::size_t trials = 0;
  double grand_mean = 0;      // the mean of the trial means
  double within_trial = 0;    // σ²_w: the runs' variance about their own trial's mean, pooled over trials
  double between_trials = 0;  // σ²_b: the variance of the trial means less what the runs' own noise explains, ≥ 0
  double runs_per_trial = 0;  // the harmonic mean of the trials' run counts (the n of σ²_w / n)
  // Each component as a standard deviation in percent of the grand mean (NaN when the mean is 0).
  double between_sd_percent() const { return sd_percent(between_trials); }
  double within_sd_percent() const { return sd_percent(within_trial); }

 private:
  double sd_percent(double variance) const {
    return grand_mean != 0 ? 100 * std::sqrt(variance) / grand_mean : std::numeric_limits<double>::quiet_NaN();
  }
};
VarianceComponents variance_components(const std::vector<std::vector<double>>& trials);

// Fieller's interval of mean(numerator) / mean(denominator) over T paired trial means (T ≥ 2):
//   { θ : (m_n − θ m_d)² ≤ t²(T − 1) · (s_nn − 2θ s_nd + θ² s_dd) / T },
// s the sample (co)variances of the trial means. The variance of a trial mean holds both components, so the interval
// covers what another set of T trials would find, not only what more runs of these trials would. Unbounded
// (has_interval false) when the denominator's mean is not significantly non-zero; df = T − 1.
RatioInterval paired_trial_ratio_interval(const std::vector<double>& numerator_trial_means,
                                          const std::vector<double>& denominator_trial_means,
                                          double confidence = kConfidence);

}  // namespace mgpu::stats
