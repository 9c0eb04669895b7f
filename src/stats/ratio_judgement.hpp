// Purpose: the one rule that judges a ratio by where its interval lies (docs/statistics.md, "The interval rule"):
// wholly above 1 + δ, wholly below 1 − δ, containing 1, or excluding 1 but not the band of δ either side of it; or no
// interval. The answer's sentence on every speedup (verdict.hpp) and compare's verdict are its words; δ is
// kMinimumEffect (2%) for the answer and compare's default.
#pragma once

#include "stats/speedup_interval.hpp"

namespace mgpu::stats {

enum class RatioJudgement {
  above,         // low > 1 + δ: faster by more than δ
  below,         // high < 1 − δ: slower by more than δ
  contains_one,  // low <= 1 <= high: no significant difference
  within_band,   // excludes 1, not the band: a difference, but not clearly by more than δ
  no_interval,   // fewer runs (or trials) than an interval needs, or an unbounded one
};

RatioJudgement judge_ratio(const RatioInterval& ratio, double min_effect = kMinimumEffect);

}  // namespace mgpu::stats
