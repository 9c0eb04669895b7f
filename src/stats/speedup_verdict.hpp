// Purpose: the verdict's rule, defined once (docs/verdict.md "The sentence"): where a speedup's 95% interval lies
// against 1 and the 2% minimum effect decides faster, slower or neither. The sentence (verdict.hpp), the break-even's
// bands of no clear difference (break_even.hpp) and every output that says faster or slower read this.
#pragma once

#include <string>

namespace mgpu::stats {

enum class SpeedupVerdict {
  slower,                     // the interval lies wholly below 1 - kMinimumEffect
  faster,                     // wholly above 1 + kMinimumEffect
  no_significant_difference,  // it contains 1 (an end at exactly 1 counts)
  no_clear_difference,        // it excludes 1 but reaches into 1 ± kMinimumEffect (ends included)
  no_interval,                // there is none: too few runs, too noisy, or a prediction
};

SpeedupVerdict speedup_verdict(bool has_interval, double low, double high);

// Neither faster nor slower, with an interval: the verdict the break-even's bands are made of.
bool is_no_difference(SpeedupVerdict verdict);

// Why a measured speedup has no interval, from the fewer kept runs of its two sides: "too few runs" below
// kMinimumRunsForInterval, else "too noisy" (Fieller's interval is unbounded where the 1-GPU mean is not clearly
// above 0).
std::string missing_interval_reason(int fewest_kept_runs);

}  // namespace mgpu::stats
