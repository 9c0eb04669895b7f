// Purpose: baseline_command and missing_baseline_note (missing_baseline.hpp).
#include "missing_baseline.hpp"

namespace mgpu::analysis {

std::string baseline_command(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  const std::string ranks = std::to_string(m.ranks());
  std::string command = "mpirun -np " + ranks + " mgpu_bench";
  if (m.training().model.name == "medium" || m.training().model.name == "large") {
    command += " --model " + m.training().model.name;
  } else {
    command += " --layers ";
    for (std::size_t i = 0; i < m.training().model.widths.size(); ++i)
      command += (i > 0 ? "," : "") + std::to_string(m.training().model.widths[i]);
  }
  command += " --batch " + std::to_string(m.global_batch()) + " --gpus 1," + ranks;
  if (m.device == "cpu") command += " --device cpu";
  if (m.training().precision != Precision::fp32)
    command += std::string(" --precision ") + setting_name(m.training().precision);
  if (m.training().timing != TimingMode::events)
    command += std::string(" --timing ") + setting_name(m.training().timing);
  if (m.training().accumulate_steps != 1) command += " --accumulate " + std::to_string(m.training().accumulate_steps);
  // Warm-up and measured steps are part of the pairing; the run count is not, but the same count makes the two
  // intervals comparable.
  command += " --warmup " + std::to_string(m.training().warmup_steps) + " --steps " +
             std::to_string(m.training().measured_steps) + " --runs " + std::to_string(m.configuration.runs_requested);
  if (m.training().seed != 1) command += " --seed " + std::to_string(m.training().seed);
  return command;
}

std::string missing_baseline_note(const stats::ConfigurationStats& s) {
  return "'" + s.file + "' " + s.label + " (" + std::to_string(s.results->ranks()) +
         " GPUs) has no 1-GPU baseline (no 1-GPU configuration of the same model, batch and settings was given); "
         "measure one beside it with: " +
         baseline_command(s);
}

}  // namespace mgpu::analysis
