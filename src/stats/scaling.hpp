// Purpose: the scaling table's pairs (docs/measurement.md "Definitions"): each N-GPU configuration with the 1-GPU
// configuration of the same scaling identity (pairing_identity.hpp); speedup = mean throughput(N) / mean
// throughput(1) with its Fieller interval, efficiency = speedup / N, and Welch's test of the two run samples.
#pragma once

#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"
#include "stats/trial_interval.hpp"

namespace mgpu::stats {

struct ScalingPair {
  const ConfigurationStats* single = nullptr;  // 1 GPU
  const ConfigurationStats* multi = nullptr;   // N GPUs
  RatioInterval speedup;
  double efficiency = 0;
  WelchTest welch;  // multi − single
};

struct ScalingTable {
  std::vector<ScalingPair> pairs;
  std::vector<const ConfigurationStats*> without_baseline;  // N-GPU configurations no 1-GPU one matches
  // Configurations whose step is known wrong (ConfigurationStats::wrong_step: a failed math check, replicas that
  // differed after the runs): they are neither baselines nor paired.
  std::vector<const ConfigurationStats*> wrong_steps;
  // A 1-GPU identity seen more than once: the first one (in the order given) is the baseline; these are not used.
  std::vector<const ConfigurationStats*> duplicate_baselines;
};

ScalingTable build_scaling_table(const std::vector<ConfigurationStats>& configurations);

// A scaling pair measured more than once (the files of several jobs of one command, given together): the k-th 1-GPU
// configuration of a scaling identity and the k-th N-GPU configuration of that identity and GPU count, in the order
// given, are trial k. Their speedup interval comes from the trial means (trial_interval.hpp), so it covers the
// variation between processes (set-up, GEMM tuning) that one job's runs cannot show.
struct TrialScalingPair {
  std::vector<const ConfigurationStats*> singles;  // trial k's 1-GPU configuration
  std::vector<const ConfigurationStats*> multis;   // trial k's N-GPU configuration
  RatioInterval speedup;                           // over the trials' mean throughputs (kept runs), paired by trial
  VarianceComponents single_components;            // of the kept runs' throughputs, trials as groups
  VarianceComponents multi_components;
};
// Every pair with two or more trials (as many as the shorter side has), in the order of the first N-GPU
// configuration; configurations whose replicas differed take no part.
std::vector<TrialScalingPair> build_trial_scaling(const std::vector<ConfigurationStats>& configurations);

}  // namespace mgpu::stats
