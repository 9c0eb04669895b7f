// Purpose: the refusal of step_time_check.hpp.
#include "stats/step_time_check.hpp"

#include <cmath>
#include <cstdio>

#include "platform/error.hpp"

namespace mgpu::stats {
namespace {

std::string number_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

void check_step_times(const ConfigurationResults& c, const std::string& file) {
  for (int p = 0; p < kPhaseCount; ++p) {
    const Phase phase = Phase(p);
    const bool is_step = phase == Phase::step;
    const ResultArray<double>& values = c.measurements.phase_ms[p];
    for (int run = 0; run < c.runs(); ++run)
      for (int rank = 0; rank < c.ranks(); ++rank)
        for (int step = 0; step < c.steps(); ++step) {
          const double value = values.at(run, rank, step);
          const bool bad = is_step ? !(std::isfinite(value) && value > 0) : std::isinf(value);
          if (!bad) continue;
          throw UsageError("'" + file + "': configuration '" + c.metadata.name + "', run " + std::to_string(run) +
                           ", rank " + std::to_string(rank) + ", step " + std::to_string(step) + ": " +
                           phase_name(phase) + "_ms is " + number_text(value) + "; " +
                           (is_step ? "a step time must be a positive finite number"
                                    : "a phase time must be finite (NaN: not measured)") +
                           ", the file is damaged or was altered");
        }
  }
}

}  // namespace mgpu::stats
