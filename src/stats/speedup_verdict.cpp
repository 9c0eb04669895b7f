// Purpose: speedup_verdict and its helpers (speedup_verdict.hpp).
#include "stats/speedup_verdict.hpp"

#include "stats/statistics.hpp"

namespace mgpu::stats {

SpeedupVerdict speedup_verdict(bool has_interval, double low, double high, double min_effect) {
  if (!has_interval) return SpeedupVerdict::no_interval;
  if (high < 1 - min_effect) return SpeedupVerdict::slower;
  if (low > 1 + min_effect) return SpeedupVerdict::faster;
  if (low <= 1 && 1 <= high) return SpeedupVerdict::no_significant_difference;
  return SpeedupVerdict::no_clear_difference;
}

bool is_no_difference(SpeedupVerdict verdict) {
  return verdict == SpeedupVerdict::no_significant_difference || verdict == SpeedupVerdict::no_clear_difference;
}

std::string missing_interval_reason(int fewest_kept_runs) {
  return fewest_kept_runs < static_cast<int>(kMinimumRunsForInterval) ? "too few runs" : "too noisy";
}

std::string speedup_verdict_words(SpeedupVerdict verdict, const std::string& missing_interval) {
  switch (verdict) {
    case SpeedupVerdict::slower:
      return "slower";
    case SpeedupVerdict::faster:
      return "faster";
    case SpeedupVerdict::no_significant_difference:
      return "no significant difference";
    case SpeedupVerdict::no_clear_difference:
      return "no clear difference";
    case SpeedupVerdict::no_interval:
      break;
  }
  return missing_interval + " to tell";
}

}  // namespace mgpu::stats
