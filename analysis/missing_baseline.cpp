// Purpose: baseline_command and missing_baseline_note (missing_baseline.hpp).
#include "missing_baseline.hpp"

#include "config/reproducing_command.hpp"

namespace mgpu::analysis {

std::string baseline_command(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  const bool cuda = m.device != "cpu";
  const ReproducingCommand command = reproducing_command(one_gpu_baseline(m.configuration, cuda), {"1", cuda});
  std::string text = "mpirun -np 1 mgpu_bench" + command.arguments;
  if (m.implementation != results_schema::kImplementation)
    text += " (measured by " + m.implementation + ": its baseline must come from the same code to pair)";
  if (!command.unreproduced.empty()) {
    std::string names;
    for (const std::string& name : command.unreproduced) names += (names.empty() ? "" : ", ") + name;
    text += " (no option gives this configuration's " + names + ")";
  }
  return text;
}

std::string missing_baseline_note(const stats::ConfigurationStats& s) {
  return "'" + s.file + "' " + s.label + " (" + std::to_string(s.results->ranks()) +
         " GPUs) has no 1-GPU baseline (no 1-GPU configuration of the same model, batch and settings was given); "
         "measure one beside it with: " +
         baseline_command(s);
}

}  // namespace mgpu::analysis
