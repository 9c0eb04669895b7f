// Purpose: the math check's agreement over a configuration's ranks (math_check_agreement.hpp).
#include "study/math_check_agreement.hpp"

#include <algorithm>
#include <cstdio>

namespace mgpu {

MathCheckRecord check_configuration_math(Trainer& trainer, const TrainingSettings& settings, const MpiContext& sub,
                                         const std::string& name, ReferenceRuns& references) {
  MathCheckRecord record;
  record.mine = check_math(trainer, settings, references);
  record.errors = allgather_doubles(sub, record.mine.error);
  for (double seconds : allgather_doubles(sub, record.mine.seconds)) record.seconds = std::max(record.seconds, seconds);
  int worst = 0;
  for (int r = 0; r < sub.size; ++r) {
    // NaN (a step that produced no number) is the worst of all.
    if (!(record.errors[r] <= record.errors[worst])) worst = r;
  }
  record.passed = std::all_of(record.errors.begin(), record.errors.end(),
                              [&](double error) { return record.mine.within_tolerance(error); });
  char text[256];
  std::snprintf(text, sizeof text, "%s: relative error %.2g on rank %d, the largest of %d (tolerance %.2g, %d steps)",
                record.passed ? "passed" : "FAILED", record.errors[worst], worst, sub.size, record.mine.tolerance,
                record.mine.steps);
  record.text = text;
  if (!record.passed) {
    std::snprintf(text, sizeof text,
                  ": the math check failed: after %d steps rank %d's parameters are %.2g of the reference's movement "
                  "away from the reference's, beyond the tolerance %.2g; no run was measured",
                  record.mine.steps, worst, record.errors[worst], record.mine.tolerance);
    record.refusal = name + text;
  }
  return record;
}

void record_math_check(ConfigurationMetadata& metadata, const MathCheckRecord& math) {
  metadata.math_check = math.text;
  metadata.math_check_errors = math.errors;
  metadata.math_check_tolerance = math.mine.tolerance;
  metadata.math_check_steps = math.mine.steps;
  metadata.math_check_seconds = math.seconds;
}

}  // namespace mgpu
