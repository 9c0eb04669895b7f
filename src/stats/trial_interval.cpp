// Purpose: variance components of trials of runs, and the paired Fieller interval of a ratio of trial means.
#include "stats/trial_interval.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mgpu::stats {
namespace {

double average(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// The sample covariance of two equally long vectors (n - 1 in the denominator).
double covariance(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = average(x), my = average(y);
  double sum = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sum += (x[i] - mx) * (y[i] - my);
  return sum / static_cast<double>(x.size() - 1);
}

}  // namespace

VarianceComponents variance_components(const std::vector<std::vector<double>>& trials) {
  if (trials.size() < 2) throw std::invalid_argument("variance components need two or more trials");
  VarianceComponents c;
  c.trials = trials.size();
  std::vector<double> trial_means;
  double squares_within = 0, inverse_runs = 0;
  std::size_t runs = 0;
  for (const std::vector<double>& trial : trials) {
    if (trial.empty()) throw std::invalid_argument("a trial without runs");
    const double m = average(trial);
    trial_means.push_back(m);
    for (const double v : trial) squares_within += (v - m) * (v - m);
    runs += trial.size();
    inverse_runs += 1.0 / static_cast<double>(trial.size());
  }
  c.grand_mean = average(trial_means);
  c.runs_per_trial = static_cast<double>(c.trials) / inverse_runs;
  // Pooled over the trials' own degrees of freedom; 0 when every trial has a single run (nothing to pool).
  const std::size_t within_df = runs - c.trials;
  c.within_trial = within_df > 0 ? squares_within / static_cast<double>(within_df) : 0.0;
  c.between_trials = std::max(0.0, covariance(trial_means, trial_means) - c.within_trial / c.runs_per_trial);
  return c;
}

RatioInterval paired_trial_ratio_interval(const std::vector<double>& numerator_trial_means,
                                          const std::vector<double>& denominator_trial_means, double confidence) {
  if (numerator_trial_means.size() != denominator_trial_means.size())
    throw std::invalid_argument("paired trials: the two sides have different trial counts");
  RatioInterval r;
  const std::size_t trials = numerator_trial_means.size();
  if (trials == 0) return r;
  const double mn = average(numerator_trial_means), md = average(denominator_trial_means);
  if (md == 0) return r;
  r.ratio = mn / md;
  if (trials < 2) return r;
  r.df = static_cast<double>(trials - 1);
  const double t = student_t_quantile(1 - (1 - confidence) / 2, r.df);
  const double c = t * t / static_cast<double>(trials);
  const double snn = covariance(numerator_trial_means, numerator_trial_means);
  const double sdd = covariance(denominator_trial_means, denominator_trial_means);
  const double snd = covariance(numerator_trial_means, denominator_trial_means);
  // (md² − c sdd) θ² − 2 (mn md − c snd) θ + (mn² − c snn) ≤ 0
  const double a = md * md - c * sdd;
  if (a <= 0) return r;  // the denominator is not significantly non-zero: the set is unbounded
  const double b = mn * md - c * snd;
  const double discriminant = b * b - a * (mn * mn - c * snn);
  const double root = std::sqrt(std::max(0.0, discriminant));
  r.low = (b - root) / a;
  r.high = (b + root) / a;
  r.has_interval = true;
  return r;
}

}  // namespace mgpu::stats
