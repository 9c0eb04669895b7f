// Purpose: find_break_even and its sentence (break_even.hpp).
#include "stats/break_even.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "platform/error.hpp"
#include "stats/statistics.hpp"

namespace mgpu::stats {
namespace {

std::string point_text(const SpeedupPoint& p) {
  char text[128];
  if (p.has_interval)
    std::snprintf(text, sizeof text, "%lld: %.3g [%.3g, %.3g]", p.global_batch, p.speedup, p.low, p.high);
  else
    std::snprintf(text, sizeof text, "%lld: %.3g", p.global_batch, p.speedup);
  return text;
}

}  // namespace

BreakEven find_break_even(std::vector<SpeedupPoint> points) {
  for (const SpeedupPoint& p : points)
    if (p.global_batch <= 0 || !std::isfinite(p.speedup) || p.speedup <= 0)
      throw UsageError("break-even: speedup " + std::to_string(p.speedup) + " at global batch " +
                       std::to_string(p.global_batch) + " is not a positive finite number at a positive batch");
  std::sort(points.begin(), points.end(),
            [](const SpeedupPoint& a, const SpeedupPoint& b) { return a.global_batch < b.global_batch; });
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].global_batch == points[i - 1].global_batch)
      throw UsageError("break-even: global batch " + std::to_string(points[i].global_batch) + " appears twice");

  BreakEven result;
  if (points.empty()) return result;
  const std::size_t n = points.size();
  // The first index from which every point pays (speedup >= 1); n when the largest batch does not pay.
  std::size_t first_paying = n;
  while (first_paying > 0 && points[first_paying - 1].speedup >= 1) --first_paying;
  if (first_paying == n) {
    result.kind = BreakEven::Kind::never;
    result.below = points.back();
  } else if (first_paying == 0) {
    result.kind = BreakEven::Kind::always;
    result.batch = static_cast<double>(points.front().global_batch);
    result.above = points.front();
  } else {
    result.kind = BreakEven::Kind::crossing;
    const SpeedupPoint& lo = points[first_paying - 1];
    const SpeedupPoint& hi = points[first_paying];
    if (hi.speedup == 1) {
      result.batch = static_cast<double>(hi.global_batch);
      result.below = hi;
      result.above = hi;
    } else {
      // Linear in log(batch): s(x) = s_lo + (s_hi - s_lo) (x - x_lo) / (x_hi - x_lo), solved for s = 1.
      const double x_lo = std::log(static_cast<double>(lo.global_batch));
      const double x_hi = std::log(static_cast<double>(hi.global_batch));
      const double fraction = (1 - lo.speedup) / (hi.speedup - lo.speedup);
      result.batch = std::exp(x_lo + fraction * (x_hi - x_lo));
      result.below = lo;
      result.above = hi;
    }
  }
  // Smallest significant batch: scanning down from the largest, the last point (smallest batch) whose interval lies
  // above 1 + kMinimumEffect while every point after it pays.
  for (std::size_t i = first_paying; i < n; ++i)
    if (points[i].has_interval && points[i].low > 1 + kMinimumEffect) {
      result.smallest_significant = points[i];
      break;
    }
  return result;
}

std::string describe_break_even(const BreakEven& b) {
  char text[256];
  switch (b.kind) {
    case BreakEven::Kind::no_data:
      return "no measured batch";
    case BreakEven::Kind::never:
      return "never in the measured range (largest batch " + point_text(*b.below) + ")";
    case BreakEven::Kind::always:
      return "pays at every measured batch (from " + point_text(*b.above) + ")";
    case BreakEven::Kind::crossing:
      if (b.below->global_batch == b.above->global_batch)
        return "break-even at global batch " + std::to_string(b.above->global_batch) + " (speedup exactly 1)";
      std::snprintf(text, sizeof text, "break-even at global batch ~%.0f (between %s and %s)", b.batch,
                    point_text(*b.below).c_str(), point_text(*b.above).c_str());
      return text;
  }
  return "";
}

}  // namespace mgpu::stats
