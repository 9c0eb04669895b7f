// Purpose: compare two result sets (before, after): configurations paired by their full comparison identity
// (pairing_identity.hpp), throughput ratio after/before with its Fieller interval, Welch's p, and a verdict.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

struct CompareOptions {
  double alpha = 0.05;                 // significance level of Welch's two-sided test
  double min_effect = kMinimumEffect;  // smallest relative change in mean throughput that counts (0.02 = 2%)
  // false: pair configurations that differ only in nccl_algo / nccl_proto (to compare NCCL settings themselves).
  bool match_nccl_settings = true;
};

// SAME unless Welch's p < alpha AND the ratio differs from 1 by at least min_effect: then FASTER (ratio > 1) or
// SLOWER. At the edges: p == alpha is not significant, |ratio - 1| == min_effect counts. NONE when a side has fewer
// than 2 kept runs (no test possible).
enum class Verdict { same, faster, slower, none };
const char* verdict_name(Verdict verdict);
Verdict decide_verdict(double ratio, const WelchTest& welch, const CompareOptions& options);

// One configuration of both sides. Where each side holds two or more trials of it (configurations of one identity, in
// the order given), the ratio and Welch's test are of the trial means (independent processes on either side);
// otherwise of the first configuration's runs on each side, the rest of a side listed as found on one side only.
struct ComparedPair {
  const ConfigurationStats* before = nullptr;  // the first trial's
  const ConfigurationStats* after = nullptr;
  std::size_t before_trials = 1, after_trials = 1;
  SampleSummary before_throughput, after_throughput;  // over the runs, or over the trial means
  RatioInterval ratio;                                // after / before
  WelchTest welch;                                    // after − before
  Verdict verdict = Verdict::none;
  bool in_trials() const { return before_trials >= 2 && after_trials >= 2; }
};

struct Comparison {
  std::vector<ComparedPair> pairs;
  std::vector<const ConfigurationStats*> only_before;
  std::vector<const ConfigurationStats*> only_after;
};

Comparison compare_results(const std::vector<ConfigurationStats>& before, const std::vector<ConfigurationStats>& after,
                           const CompareOptions& options);

}  // namespace mgpu::stats
