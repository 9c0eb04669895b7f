// Purpose: the warning for a configuration the analyzer leaves out because it has no completed run, with the reason
// the file gives where it gives one (a math check that refused it, a signal, the watchdog).
#pragma once

#include <string>

#include "results/results_reader.hpp"

namespace mgpu::analysis {

// "mgpu_analyze: warning: 'FILE': configuration 'NAME' has no completed run (REASON); left out".
inline std::string no_completed_run_warning(const std::string& path, const ConfigurationResults& configuration) {
  std::string text =
      "mgpu_analyze: warning: '" + path + "': configuration '" + configuration.metadata.name + "' has no completed run";
  if (!configuration.progress.interrupted.empty()) text += " (" + configuration.progress.interrupted + ")";
  return text + "; left out";
}

}  // namespace mgpu::analysis
