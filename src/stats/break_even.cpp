// Purpose: estimate_break_even and every sentence about a break-even (break_even.hpp).
#include "stats/break_even.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "platform/error.hpp"

namespace mgpu::stats {
namespace {

double log_batch(const SpeedupPoint& p) { return std::log(static_cast<double>(p.global_batch)); }

// Where the line through (x0, v0) and (x1, v1) reaches 1; the caller knows that 1 lies between v0 and v1 (a level
// line, which an interval that holds its own estimate never gives there, reads as reaching it at x0).
double where_one(double x0, double v0, double x1, double v1) {
  return v1 == v0 ? x0 : x0 + (1 - v0) / (v1 - v0) * (x1 - x0);
}

std::string formatted(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string batch_text(double batch) { return formatted("%.0f", batch); }
std::string speedup_text(double speedup) { return formatted("%.3g", speedup); }

// "32: 0.8 [0.78, 0.82]", "32: 0.8 (too few runs)", "32: 0.8" (predicted).
std::string point_text(const SpeedupPoint& p) {
  std::string text = std::to_string(p.global_batch) + ": " + speedup_text(p.speedup);
  if (p.has_interval) return text + " [" + speedup_text(p.low) + ", " + speedup_text(p.high) + "]";
  return p.missing_interval.empty() ? text : text + " (" + p.missing_interval + ")";
}

// Sets the crossing's interval, or why it has none, once any point the walk needs lacks an interval.
bool needs_interval(const SpeedupPoint& p, Crossing& c) {
  if (p.has_interval) return true;
  c.missing_interval =
      p.missing_interval.empty() ? "" : "no interval at " + std::to_string(p.global_batch) + ": " + p.missing_interval;
  return false;
}

// The crossing in the segment between points i and i + 1: from it, towards smaller and then larger batches, the
// stretch where the interpolated interval [low, high] contains 1. In each segment the set where high >= 1 and the
// set where low <= 1 are intervals of log(batch), so the stretch ends in the first segment where either bound
// crosses 1, at that crossing; an end that reaches the first or last point is open.
void set_interval(const std::vector<SpeedupPoint>& p, std::size_t i, Crossing& c) {
  if (!needs_interval(p[i], c) || !needs_interval(p[i + 1], c)) return;
  double low = 0, high = 0;
  for (std::size_t j = i;; --j) {
    const SpeedupPoint &a = p[j], &b = p[j + 1];
    if (!needs_interval(a, c)) return;
    double end = log_batch(a);
    if (a.high < 1) end = std::max(end, where_one(log_batch(a), a.high, log_batch(b), b.high));
    if (a.low > 1) end = std::max(end, where_one(log_batch(a), a.low, log_batch(b), b.low));
    if (end > log_batch(a) || j == 0) {
      low = end;
      c.low_open = !(end > log_batch(a));
      break;
    }
  }
  for (std::size_t j = i;; ++j) {
    const SpeedupPoint &a = p[j], &b = p[j + 1];
    if (!needs_interval(b, c)) return;
    double end = log_batch(b);
    if (b.high < 1) end = std::min(end, where_one(log_batch(a), a.high, log_batch(b), b.high));
    if (b.low > 1) end = std::min(end, where_one(log_batch(a), a.low, log_batch(b), b.low));
    if (end < log_batch(b) || j + 2 == p.size()) {
      high = end;
      c.high_open = !(end < log_batch(b));
      break;
    }
  }
  c.has_interval = true;
  c.low = std::exp(low);
  c.high = std::exp(high);
  // exp(log(b)) is b within rounding; an open end is the measured batch itself.
  if (c.low_open) c.low = static_cast<double>(p.front().global_batch);
  if (c.high_open) c.high = static_cast<double>(p.back().global_batch);
}

// "at 128" or "from 8 to 32".
std::string span_text(const SpeedupPoint& first, const SpeedupPoint& last) {
  if (first.global_batch == last.global_batch) return "at " + std::to_string(first.global_batch);
  return "from " + std::to_string(first.global_batch) + " to " + std::to_string(last.global_batch);
}

// "(1.01)" or "(0.97 to 1.01)".
std::string range_text(double lowest, double highest) {
  if (speedup_text(lowest) == speedup_text(highest)) return "(" + speedup_text(lowest) + ")";
  return "(" + speedup_text(lowest) + " to " + speedup_text(highest) + ")";
}

// What a run of points with one verdict is called; points without an interval say why. A band of no clear
// difference holds both kinds of neither faster nor slower.
std::string verdict_words(SpeedupVerdict verdict, const SpeedupPoint& p) {
  return speedup_verdict_words(is_no_difference(verdict) ? SpeedupVerdict::no_clear_difference : verdict,
                               p.missing_interval);
}

}  // namespace

bool BreakEven::predicted() const {
  return !points.empty() && std::all_of(points.begin(), points.end(), [](const SpeedupPoint& p) {
    return !p.has_interval && p.missing_interval.empty();
  });
}

BreakEven estimate_break_even(std::vector<SpeedupPoint> points) {
  for (const SpeedupPoint& p : points)
    if (p.global_batch <= 0 || !std::isfinite(p.speedup) || p.speedup <= 0)
      throw UsageError("break-even: speedup " + std::to_string(p.speedup) + " at global batch " +
                       std::to_string(p.global_batch) + " is not a positive finite number at a positive batch");
  std::sort(points.begin(), points.end(),
            [](const SpeedupPoint& a, const SpeedupPoint& b) { return a.global_batch < b.global_batch; });
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].global_batch == points[i - 1].global_batch)
      throw UsageError("break-even: global batch " + std::to_string(points[i].global_batch) + " appears twice");

  BreakEven b;
  b.points = points;
  for (const SpeedupPoint& p : points) b.verdicts.push_back(speedup_verdict(p.has_interval, p.low, p.high));
  const std::size_t n = points.size();
  // A crossing wherever consecutive points lie on either side of 1 (a point at exactly 1 counts as at or above).
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const SpeedupPoint &a = points[i], &z = points[i + 1];
    if ((a.speedup >= 1) == (z.speedup >= 1)) continue;
    Crossing c;
    c.rising = a.speedup < 1;
    c.batch = std::exp(where_one(log_batch(a), a.speedup, log_batch(z), z.speedup));
    c.before = a;
    c.after = z;
    set_interval(points, i, c);
    b.crossings.push_back(c);
  }
  for (std::size_t i = 0; i < n;) {
    if (!is_no_difference(b.verdicts[i])) {
      ++i;
      continue;
    }
    NoDifferenceBand band{points[i], points[i], 0, points[i].speedup, points[i].speedup};
    for (; i < n && is_no_difference(b.verdicts[i]); ++i) {
      band.last = points[i];
      ++band.batches;
      band.lowest_speedup = std::min(band.lowest_speedup, points[i].speedup);
      band.highest_speedup = std::max(band.highest_speedup, points[i].speedup);
    }
    b.bands.push_back(band);
  }
  std::size_t first_faster = n;
  while (first_faster > 0 && b.verdicts[first_faster - 1] == SpeedupVerdict::faster) --first_faster;
  if (first_faster < n) b.faster_from = points[first_faster];
  return b;
}

std::string break_even_kind(const BreakEven& b) {
  if (b.points.empty()) return "no_data";
  if (b.crossings.size() == 1) return b.crossings.front().rising ? "rising" : "falling";
  if (!b.crossings.empty()) return "several_crossings";
  return b.points.front().speedup >= 1 ? "above_1" : "below_1";
}

std::string crossing_text(const Crossing& c) {
  const std::string batch = "~" + batch_text(c.batch);
  if (c.has_interval)
    return batch + " [" + (c.low_open ? "<" : "") + batch_text(c.low) + ", " + (c.high_open ? ">" : "") +
           batch_text(c.high) + "]";
  return c.missing_interval.empty() ? batch : batch + " (" + c.missing_interval + ")";
}

std::string break_even_summary(const BreakEven& b) {
  if (b.points.empty()) return "no data";
  if (b.crossings.empty()) {
    const std::string side = b.points.front().speedup >= 1 ? "none (speedup >= 1 " : "none (speedup < 1 ";
    return side + span_text(b.points.front(), b.points.back()) +
           (b.points.size() == 1 ? ", the only batch measured)" : ")");
  }
  if (b.crossings.size() == 1)
    return b.crossings.front().rising ? crossing_text(b.crossings.front())
                                      : "falls below 1 at " + crossing_text(b.crossings.front());
  std::string text;
  for (const Crossing& c : b.crossings)
    text += (text.empty() ? "" : ", ") + std::string(c.rising ? "rises at " : "falls at ") + crossing_text(c);
  return text;
}

std::string bands_summary(const BreakEven& b) {
  if (b.predicted()) return "n/a (predicted)";
  if (b.bands.empty()) return "none";
  std::string text;
  for (const NoDifferenceBand& band : b.bands) {
    const std::string span =
        band.batches == 1 ? std::to_string(band.first.global_batch)
                          : std::to_string(band.first.global_batch) + " to " + std::to_string(band.last.global_batch);
    text += (text.empty() ? "" : "; ") + span + " " + range_text(band.lowest_speedup, band.highest_speedup);
  }
  return text;
}

std::string verdicts_by_batch(const BreakEven& b) {
  if (b.points.empty() || b.predicted()) return "";
  std::string text;
  for (std::size_t i = 0; i < b.points.size();) {
    const std::string words = verdict_words(b.verdicts[i], b.points[i]);
    std::size_t j = i;
    double lowest = b.points[i].speedup, highest = lowest;
    while (j + 1 < b.points.size() && verdict_words(b.verdicts[j + 1], b.points[j + 1]) == words) {
      ++j;
      lowest = std::min(lowest, b.points[j].speedup);
      highest = std::max(highest, b.points[j].speedup);
    }
    // A speedup without an interval is said so, not shown bare.
    text += (text.empty() ? "" : ", ") + words + " " + span_text(b.points[i], b.points[j]) +
            (b.verdicts[i] == SpeedupVerdict::no_interval ? "" : " " + range_text(lowest, highest));
    // The last run says where the measured range ends: no claim goes beyond it.
    if (j + 1 == b.points.size())
      text += b.points.size() == 1 ? ", the only batch measured"
                                   : (i == j ? ", the largest batch measured" : ", up to the largest batch measured");
    i = j + 1;
  }
  return text;
}

std::string describe_break_even(const BreakEven& b) {
  if (b.points.empty()) return "no measured batch";
  std::string text;
  const auto between = [](const Crossing& c) {
    return "between " + point_text(c.before) + " and " + point_text(c.after);
  };
  if (b.crossings.size() == 1) {
    const Crossing& c = b.crossings.front();
    text = c.rising
               ? "break-even at global batch " + crossing_text(c) + ", where the speedup rises through 1 " + between(c)
               : "the speedup falls below 1 at global batch " + crossing_text(c) + ", " + between(c);
  } else if (!b.crossings.empty()) {
    text = "the speedup crosses 1 " + std::to_string(b.crossings.size()) + " times:";
    for (std::size_t k = 0; k < b.crossings.size(); ++k) {
      const Crossing& c = b.crossings[k];
      text += std::string(k == 0 ? " " : ", ") + (c.rising ? "rising at " : "falling at ") + crossing_text(c) + " (" +
              between(c) + ")";
    }
  } else if (b.points.size() == 1) {
    text = "no break-even: one batch measured (" + point_text(b.points.front()) + ")";
  } else {
    text = std::string("no break-even in the measured range: the speedup is ") +
           (b.points.front().speedup >= 1 ? "1 or above" : "below 1") + " at every batch " +
           span_text(b.points.front(), b.points.back()) + " (the largest, " + point_text(b.points.back()) + ")";
  }
  const std::string verdicts = verdicts_by_batch(b);
  return verdicts.empty() ? text : text + "; " + verdicts;
}

}  // namespace mgpu::stats
