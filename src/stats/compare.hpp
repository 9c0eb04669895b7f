// Purpose: compare two result sets (before, after): configurations paired by their full comparison identity
// (pairing_identity.hpp), throughput ratio after/before with its Fieller interval, Welch's p, and the verdict of the
// answer's interval rule.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

struct CompareOptions {
  double confidence = kConfidence;     // of the ratio's interval (--alpha A: 1 − A)
  double min_effect = kMinimumEffect;  // δ of the interval rule: the smallest relative change that counts (0.02 = 2%)
  // false: pair configurations that differ only in nccl_algo / nccl_proto (to compare NCCL settings themselves).
  bool match_nccl_settings = true;
  // Identity attributes left out of the pairing (--ignore-setting): a name of comparison_identity_attributes(), or
  // kPerBatchSettings for every setting --X auto decides per batch (config/settings_table.hpp: two builds' default
  // steps, whichever way each decides them; the precision, to hold tf32x3 to the fp32 it replaces).
  std::vector<std::string> ignored_settings;
};
inline constexpr char kPerBatchSettings[] = "per-batch";
// Whether `name` may be given to --ignore-setting.
bool is_ignorable_setting(const std::string& name);

// The answer's interval rule (speedup_verdict.hpp) in compare's words, on the after/before ratio's interval: FASTER
// where it lies wholly above 1 + min_effect, SLOWER wholly below 1 − min_effect, SAME where it contains 1, UNCLEAR
// where it excludes 1 but not the band of min_effect either side of it, n/a without an interval (fewer than 5 kept
// runs, 2 trials, on a side, or an unbounded interval). Welch's test is reported beside it, and decides nothing.
enum class Verdict { same, faster, slower, unclear, none };
const char* verdict_name(Verdict verdict);
Verdict decide_verdict(const RatioInterval& ratio, const CompareOptions& options);

// One configuration of both sides. Where each side holds two or more trials of it (configurations of one identity, in
// the order given), the ratio and Welch's test are of the trial means (independent processes on either side);
// otherwise of the first configuration's runs on each side, the rest of a side listed as found on one side only.
struct ComparedPair {
  const ConfigurationStats* before = nullptr;  // the first trial's
  const ConfigurationStats* after = nullptr;
  std::size_t before_trials = 1, after_trials = 1;
  SampleSummary before_throughput, after_throughput;  // over the runs, or over the trial means
  RatioInterval ratio;                                // after / before
  WelchTest welch;                                    // after − before (reported, not judged by)
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
