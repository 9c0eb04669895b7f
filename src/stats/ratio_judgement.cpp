// Purpose: judge_ratio (ratio_judgement.hpp).
#include "stats/ratio_judgement.hpp"

namespace mgpu::stats {

RatioJudgement judge_ratio(const RatioInterval& ratio, double min_effect) {
  if (!ratio.has_interval) return RatioJudgement::no_interval;
  if (ratio.high < 1 - min_effect) return RatioJudgement::below;
  if (ratio.low > 1 + min_effect) return RatioJudgement::above;
  if (ratio.low <= 1 && 1 <= ratio.high) return RatioJudgement::contains_one;
  return RatioJudgement::within_band;
}

}  // namespace mgpu::stats
