// Purpose: the one rule that judges a ratio by where its 95% interval lies (docs/statistics.md, "The interval rule"):
// against 1 and the minimum effect δ either side of it, it decides faster, slower or neither. The answer's sentence
// (verdict.hpp), the break-even's bands of no clear difference (break_even.hpp) and compare's verdict read it; δ is
// kMinimumEffect (2%) for the answer and compare's default.
#pragma once

#include <string>

#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {

enum class SpeedupVerdict {
  slower,                     // the interval lies wholly below 1 - δ
  faster,                     // wholly above 1 + δ
  no_significant_difference,  // it contains 1 (an end at exactly 1 counts)
  no_clear_difference,        // it excludes 1 but reaches into 1 ± δ (ends included)
  no_interval,                // there is none: too few runs, too noisy, or a prediction
};

SpeedupVerdict speedup_verdict(bool has_interval, double low, double high, double min_effect = kMinimumEffect);
inline SpeedupVerdict speedup_verdict(const RatioInterval& ratio, double min_effect = kMinimumEffect) {
  return speedup_verdict(ratio.has_interval, ratio.low, ratio.high, min_effect);
}

// Neither faster nor slower, with an interval: the verdict the break-even's bands are made of.
bool is_no_difference(SpeedupVerdict verdict);

// Why a measured speedup has no interval, from the fewer kept runs of its two sides: "too few runs" below
// kMinimumRunsForInterval, else "too noisy" (Fieller's interval is unbounded where the 1-GPU mean is not clearly
// above 0).
std::string missing_interval_reason(int fewest_kept_runs);

// The verdict in a word or two, as the break-even's statement and README's answer give it: "faster", "slower", "no
// significant difference", "no clear difference", or, without an interval, its reason ("too few runs") + " to tell".
std::string speedup_verdict_words(SpeedupVerdict verdict, const std::string& missing_interval);

}  // namespace mgpu::stats
