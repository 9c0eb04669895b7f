// Purpose: the report's break-even batches (issue: "where do N GPUs start to pay?"): the scaling pairs grouped into
// speedup-vs-batch curves (one per model, GPU count and settings), each curve's break-even from find_break_even, and
// the table that states them in every output format.
#pragma once

#include <string>
#include <vector>

#include "stats/break_even.hpp"
#include "stats/scaling.hpp"
#include "table.hpp"

namespace mgpu::analysis {

struct BreakEvenCurve {
  std::string series;  // series_name() of its N-GPU configurations
  std::string model;
  int gpus = 0;
  std::vector<stats::SpeedupPoint> points;  // by global batch, ascending
  stats::BreakEven break_even;
  // N-GPU configurations left out because an earlier pair of the same curve had the same global batch.
  std::vector<const stats::ConfigurationStats*> duplicates;
};

// One curve per series, in the order the series first appear among the pairs.
std::vector<BreakEvenCurve> break_even_curves(const stats::ScalingTable& scaling);

// One row per curve: the break-even batch and its sentence (describe_break_even), the two measured neighbours with
// their intervals, and the smallest batch whose speedup is significantly above 1.
Table break_even_table(const std::vector<BreakEvenCurve>& curves);

}  // namespace mgpu::analysis
