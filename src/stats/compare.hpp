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

struct ComparedPair {
  const ConfigurationStats* before = nullptr;
  const ConfigurationStats* after = nullptr;
  RatioInterval ratio;  // after / before
  WelchTest welch;      // after − before
  Verdict verdict = Verdict::none;
};

struct Comparison {
  std::vector<ComparedPair> pairs;
  std::vector<const ConfigurationStats*> only_before;
  std::vector<const ConfigurationStats*> only_after;
};

Comparison compare_results(const std::vector<ConfigurationStats>& before, const std::vector<ConfigurationStats>& after,
                           const CompareOptions& options);

}  // namespace mgpu::stats
