// Purpose: the math check of a configuration as all its ranks agree on it (train/math_check.hpp checks one rank):
// every rank's error gathered, the verdict, the results file's text and the line that refuses the configuration.
#pragma once

#include <string>
#include <vector>

#include "comm/mpi_context.hpp"
#include "results/results_writer.hpp"
#include "train/math_check.hpp"
#include "train/trainer.hpp"

namespace mgpu {

// The math check of a configuration as every rank of it knows it (train/math_check.hpp): each rank's error, whether
// all passed, the results file's text, and the one line that refuses the configuration when one did not.
struct MathCheckRecord {
  MathCheck mine;
  std::vector<double> errors;  // per rank
  double seconds = 0.0;        // the slowest rank's
  bool passed = false;
  std::string text;     // math_check attribute: "passed: ..." or "FAILED: ..."
  std::string refusal;  // "" when passed
};

// Runs this rank's check and gathers every rank's error; collective over `sub`. `name` starts the refusal.
MathCheckRecord check_configuration_math(Trainer& trainer, const TrainingSettings& settings, const MpiContext& sub,
                                         const std::string& name, ReferenceRuns& references);

// The check's attributes of the configuration's metadata.
void record_math_check(ConfigurationMetadata& metadata, const MathCheckRecord& math);

}  // namespace mgpu
