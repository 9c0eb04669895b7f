// Purpose: the predict subcommand's plot: predicted speedup vs global batch, one line per GPU count, with measured
// speedups overlaid as points, drawn by gnuplot as PNG and SVG (data and script always written next to them).
#pragma once

#include <string>
#include <vector>

#include "stats/break_even.hpp"

namespace mgpu::analysis {

struct PredictedCurve {
  int gpus = 0;
  std::vector<stats::SpeedupPoint> points;  // predicted, no intervals
};

struct MeasuredSpeedup {
  int gpus = 0;
  long long global_batch = 0;
  double speedup = 0;
};

// Writes predicted_speedup.{dat,gp} into directory and, when gnuplot is on PATH, predicted_speedup.{png,svg}.
// Returns whether gnuplot drew them; throws UsageError when a file cannot be written, Error when gnuplot fails.
bool write_predicted_speedup_plot(const std::string& directory, const std::vector<PredictedCurve>& curves,
                                  const std::vector<MeasuredSpeedup>& measured);

}  // namespace mgpu::analysis
