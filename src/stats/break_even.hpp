// Purpose: the break-even batch of a speedup-versus-batch curve (the study's question: from which global batch do N
// GPUs pay?), for measured speedups with intervals (mgpu_analyze report, mgpu_bench's verdict) and for predicted ones
// without (mgpu_analyze predict). docs/statistics.md states the convention.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mgpu::stats {

// One batch of the curve: speedup = throughput(N GPUs) / throughput(1 GPU) at that global batch, with its 95%
// interval when one exists (measured points; predictions have none).
struct SpeedupPoint {
  long long global_batch = 0;
  double speedup = 0;
  bool has_interval = false;
  double low = 0, high = 0;
};

struct BreakEven {
  enum class Kind {
    crossing,  // the speedup rises through 1 between two measured batches (or reaches exactly 1 at one)
    always,    // speedup >= 1 at every measured batch
    never,     // speedup < 1 at the largest measured batch: N GPUs do not pay in the measured range
    no_data,   // no point
  };
  Kind kind = Kind::no_data;
  // For crossing: the batch where the curve reaches 1, interpolated linearly in log(batch) between its two
  // neighbours; `below` is the last point under 1 and `above` the first at or over it. A point at exactly 1 is its
  // own break-even (below and above are both that point). For never, `below` is the largest measured batch; for
  // always, `above` is the smallest.
  double batch = 0;
  std::optional<SpeedupPoint> below, above;
  // The smallest measured batch whose interval lies wholly above 1.02 (low > 1 + kMinimumEffect), from which every
  // larger measured batch also has speedup >= 1; empty when there is none (or no point has an interval).
  std::optional<SpeedupPoint> smallest_significant;
};

// The curve's points may come in any order and must have distinct global batches > 0 and finite speedups > 0
// (throws UsageError otherwise). Convention: the break-even is the batch from which N GPUs pay at every larger
// measured batch, i.e. the last crossing from below 1 to at or above 1; when the largest measured batch is below 1 the
// answer is `never`, even if some smaller batch was above 1 (a curve that pays only in the middle does not pay "from
// a batch on").
BreakEven find_break_even(std::vector<SpeedupPoint> points);

// One plain sentence: "break-even at global batch ≈ 310 (between 256: 0.93 [0.91, 0.95] and 512: 1.12 [1.10, 1.14])",
// "N GPUs pay at every measured batch (from 8)", "never in the measured range (largest batch 4096: 0.81 [...])".
std::string describe_break_even(const BreakEven& break_even);

}  // namespace mgpu::stats
