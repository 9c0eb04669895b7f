// Purpose: the break-even of a speedup-versus-batch curve as an estimate, not a point (docs/statistics.md
// "Break-even"): every batch where the speedup crosses 1 with its 95% interval, and the bands of measured batches
// with no clear difference, for measured curves (mgpu_analyze report, mgpu_bench's verdict) and predicted ones
// (mgpu_analyze predict, no intervals). Every word any output says about a break-even is written here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stats/speedup_verdict.hpp"

namespace mgpu::stats {

// One batch of the curve: speedup = throughput(N GPUs) / throughput(1 GPU) at that global batch, with its 95%
// interval when one exists.
struct SpeedupPoint {
  long long global_batch = 0;
  double speedup = 0;
  bool has_interval = false;
  double low = 0, high = 0;
  // Why a measured point has no interval (missing_interval_reason: "too few runs", "too noisy"); "" for a predicted
  // point, which has none by nature.
  std::string missing_interval;
};

// A batch where the curve, linear in log(batch) between measured points, reaches 1.
struct Crossing {
  bool rising = true;  // from below 1 to 1 or above (N GPUs start to pay); false: from 1 or above to below
  double batch = 0;
  // The measured neighbours: the last point before the crossing and the first after it (one of them is the crossing
  // where its speedup is exactly 1).
  SpeedupPoint before, after;
  // The 95% interval of the batch: the stretch around it where the speedup interval, interpolated the same way,
  // contains 1; its ends are where the interval's bounds cross 1, so a flat curve gives a wide interval and a steep
  // one a narrow interval. An end that reaches the edge of the measured batches is open (low_open: the stretch goes
  // on below the smallest batch measured, high_open: above the largest): no claim reaches beyond them.
  bool has_interval = false;
  double low = 0, high = 0;
  bool low_open = false, high_open = false;
  // Why a measured crossing has no interval: "no interval at 32 (too few runs)"; "" for a predicted curve.
  std::string missing_interval;
};

// Consecutive measured batches whose verdict is neither faster nor slower (speedup_verdict.hpp): the band of no
// clear difference, from `first` to `last`.
struct NoDifferenceBand {
  SpeedupPoint first, last;
  int batches = 0;
  double lowest_speedup = 0, highest_speedup = 0;
};

struct BreakEven {
  std::vector<SpeedupPoint> points;      // by global batch
  std::vector<SpeedupVerdict> verdicts;  // each point's
  std::vector<Crossing> crossings;       // by batch
  std::vector<NoDifferenceBand> bands;   // by batch
  // The smallest measured batch from which every measured batch is faster; none where the largest is not.
  std::optional<SpeedupPoint> faster_from;

  bool predicted() const;  // no point has an interval or a reason for lacking one
};

// Said under every table of break-evens: how the batch, its interval and the bands are found (the bands by the
// verdict's minimum effect, kMinimumEffect).
std::string break_even_method();

// The points may come in any order and must have distinct global batches > 0 and finite speedups > 0 (throws
// UsageError otherwise); no point is valid too.
BreakEven estimate_break_even(std::vector<SpeedupPoint> points);

// The curve's shape in one word, for data columns: "rising" or "falling" (one crossing), "several_crossings",
// "above_1" (speedup >= 1 at every batch), "below_1" (at none), "no_data".
std::string break_even_kind(const BreakEven& break_even);

// A crossing's batch with its interval, for a cell: "~59 [45, 80]", "~120 [<32, 125]" (an open end), "~59 (no
// interval: too few runs at 32)", "~310" (predicted).
std::string crossing_text(const Crossing& crossing);

// The break-even for a cell, a plot's key and a recommendation: "~59 [45, 80]" (one rising crossing), "falls below 1
// at ~300 [250, 400]", "rises at ~120 [<32, 125], falls at ~200 [150, 260], rises at ~1654 [1203, 2310]", "none
// (speedup >= 1 from 8 to 4096)", "none (speedup < 1 at 128, the only batch measured)".
std::string break_even_summary(const BreakEven& break_even);

// The bands for a cell: "128 to 1024 (0.97 to 1.01)", "128 (1.01); 4096 (0.99)", "none" (or "n/a: predicted").
std::string bands_summary(const BreakEven& break_even);

// The measured batches by verdict, in batch order, every claim inside the measured range: "slower from 8 to 32
// (0.43 to 0.52), no clear difference from 128 to 1024 (0.97 to 1.01), faster at 4096 (1.17), the largest batch
// measured"; "" for a predicted curve.
std::string verdicts_by_batch(const BreakEven& break_even);

// The whole statement: every crossing with its interval and measured neighbours (or why there is none in the
// measured range), then verdicts_by_batch: "break-even at global batch ~59 [45, 80], where the speedup rises
// through 1 between 32: 0.8 [0.78, 0.82] and 128: 1.25 [1.2, 1.3]; slower from 8 to 32 (...), faster from 128 to
// 512 (...), the largest batch measured".
std::string describe_break_even(const BreakEven& break_even);

}  // namespace mgpu::stats
