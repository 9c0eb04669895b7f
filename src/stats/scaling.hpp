// Purpose: the scaling pairs (docs/statistics.md "Scaling"): each N-GPU configuration, measured in one or more trials,
// with the 1-GPU configuration of the same scaling identity (pairing_identity.hpp). A pair measured once is judged over
// its runs (Fieller over the run means, Welch's test); a pair measured in trials over its trial means, paired by trial
// (trial_interval.hpp), since processes of one configuration differ by more than one process's runs can show.
#pragma once

#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"
#include "stats/trial_interval.hpp"

namespace mgpu::stats {

// One (model, global batch, GPU count, compared settings) against its 1-GPU baseline. Trial k is the k-th N-GPU
// configuration of that identity with a 1-GPU one of its own file, in the order given, where its file holds any (the
// same process, its neighbour in time: the trials of one job, or the files of several jobs of one command), else
// with the next of the files given without N-GPU configurations of the identity; a trial left without one is named.
struct ScalingPair {
  std::vector<const ConfigurationStats*> singles;  // trial k's 1-GPU configuration
  std::vector<const ConfigurationStats*> multis;   // trial k's N-GPU configuration
  // Each side's throughput: with trials, the mean of the trial means and its t interval over them (T - 1 df); measured
  // once, the kept runs' summary.
  SampleSummary single_throughput, multi_throughput;
  RatioInterval speedup;  // N-GPU over 1-GPU throughput, at the level above
  double efficiency = 0;  // speedup / N
  WelchTest welch;        // of the two run samples, measured once; not valid with trials (the trial interval decides)
  // With trials: the variance components of each side's kept runs, trials as groups.
  VarianceComponents single_components, multi_components;
  // Trial k alone, over its runs (the per-trial table): its speedup and Welch's test.
  std::vector<RatioInterval> trial_speedups;
  std::vector<WelchTest> trial_welch;
  // The speedup's ceiling (docs/statistics.md, "The ceiling"), where the file holds the 1-GPU configuration at the
  // local batch B/N: what N GPUs would reach if communication cost nothing, N x throughput(1 GPU, B/N) / throughput(1
  // GPU, B), and the fraction of it reached, throughput(N GPUs, B) / (N x throughput(1 GPU, B/N)). Trial k's
  // local-batch configuration pairs with trial k of each side; a pair in trials needs two of them, and gets none
  // otherwise.
  std::vector<const ConfigurationStats*> locals;
  RatioInterval ceiling, ceiling_fraction;

  std::size_t trials() const { return multis.size(); }
  bool in_trials() const { return multis.size() >= 2; }
  bool has_ceiling() const { return !locals.empty(); }
  const ConfigurationStats& single() const { return *singles.front(); }  // trial 1's
  const ConfigurationStats& multi() const { return *multis.front(); }
  int gpus() const { return multi().results->ranks(); }
};

struct ScalingTable {
  std::vector<ScalingPair> pairs;                           // in the order of their first N-GPU configuration
  std::vector<const ConfigurationStats*> without_baseline;  // N-GPU configurations no 1-GPU one matches
  // Configurations whose step is known wrong (ConfigurationStats::wrong_step: a failed math check, replicas that
  // differed after the runs): they are neither baselines nor paired.
  std::vector<const ConfigurationStats*> wrong_steps;
  // 1-GPU configurations of an identity whose baseline is an earlier 1-GPU configuration with other compared
  // settings (the first one given is the baseline); these are not used.
  std::vector<const ConfigurationStats*> duplicate_baselines;
  // Trials of one side that found no trial of the other to pair with (match_by_file in scaling.cpp).
  std::vector<const ConfigurationStats*> unmatched_trials;
};

ScalingTable build_scaling_table(const std::vector<ConfigurationStats>& configurations);

// Trial means as a sample: mean of the means, t(0.975, T - 1) · s / √T from two trials on (has_interval then).
SampleSummary summarize_trial_means(const std::vector<double>& trial_means);

}  // namespace mgpu::stats
