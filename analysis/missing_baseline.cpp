// Purpose: baseline_command and missing_baseline_note (missing_baseline.hpp).
#include "missing_baseline.hpp"

namespace mgpu::analysis {

std::string baseline_command(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  const std::string ranks = std::to_string(m.ranks);
  std::string command = "mpirun -np " + ranks + " mgpu_bench";
  if (m.model == "medium" || m.model == "large") {
    command += " --model " + m.model;
  } else {
    command += " --layers ";
    for (std::size_t i = 0; i < m.layer_widths.size(); ++i)
      command += (i > 0 ? "," : "") + std::to_string(m.layer_widths[i]);
  }
  command += " --batch " + std::to_string(m.global_batch) + " --gpus 1," + ranks;
  if (m.device == "cpu") command += " --device cpu";
  if (m.precision != "fp32") command += " --precision " + m.precision;
  if (m.timing != "events") command += " --timing " + m.timing;
  if (m.accumulate_steps != 1) command += " --accumulate " + std::to_string(m.accumulate_steps);
  // Warm-up and measured steps are part of the pairing; the run count is not, but the same count makes the two
  // intervals comparable.
  command += " --warmup " + std::to_string(m.warmup_steps) + " --steps " + std::to_string(m.measured_steps) +
             " --runs " + std::to_string(m.runs_requested);
  if (m.seed != 1) command += " --seed " + std::to_string(m.seed);
  return command;
}

std::string missing_baseline_note(const stats::ConfigurationStats& s) {
  return "'" + s.file + "' " + s.label + " (" + std::to_string(s.results->ranks()) +
         " GPUs) has no 1-GPU baseline (no 1-GPU configuration of the same model, batch and settings was given); "
         "measure one beside it with: " +
         baseline_command(s);
}

}  // namespace mgpu::analysis
