// Purpose: compare two result sets (before, after): configurations paired by their full comparison identity
// (pairing_identity.hpp), throughput ratio after/before with its Fieller interval, Welch's p, and the verdict of the
// answer's interval rule in the answer's words.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "stats/speedup_verdict.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

struct CompareOptions {
  double confidence = kConfidence;     // of the ratio's interval (--alpha A: 1 − A)
  double min_effect = kMinimumEffect;  // δ of the interval rule: the smallest relative change that counts
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

// One configuration of both sides. Where each side holds two or more trials of it (configurations of one identity, in
// the order given), the ratio and Welch's test are of the trial means (independent processes on either side);
// otherwise of the first configuration's runs on each side, the rest of a side listed as found on one side only.
// The verdict is the answer's interval rule (speedup_verdict.hpp) on the after/before ratio's interval with the band
// min_effect, said in the answer's words: "faster", "slower", "no significant difference", "no clear difference", or
// without an interval "too few runs to tell" (fewer than 5 kept runs on a side) or "too noisy to tell" (an unbounded
// interval). Welch's test is reported beside it, and decides nothing.
struct ComparedPair {
  const ConfigurationStats* before = nullptr;  // the first trial's
  const ConfigurationStats* after = nullptr;
  std::size_t before_trials = 1, after_trials = 1;
  SampleSummary before_throughput, after_throughput;  // over the runs, or over the trial means
  RatioInterval ratio;                                // after / before
  WelchTest welch;                                    // after − before (reported, not judged by)
  SpeedupVerdict verdict = SpeedupVerdict::no_interval;
  std::string verdict_text;  // speedup_verdict_words of the verdict
  // Compared over trial means; compare_results does so only where both sides hold two or more trials, and leaves both
  // counts at 1 otherwise.
  bool in_trials() const { return before_trials > 1; }
};

struct Comparison {
  std::vector<ComparedPair> pairs;
  std::vector<const ConfigurationStats*> only_before;
  std::vector<const ConfigurationStats*> only_after;
};

Comparison compare_results(const std::vector<ConfigurationStats>& before, const std::vector<ConfigurationStats>& after,
                           const CompareOptions& options);

}  // namespace mgpu::stats
