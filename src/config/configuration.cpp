// Purpose: a configuration's names (configuration.hpp).
#include "config/configuration.hpp"

#include <regex>

namespace mgpu {

std::string Configuration::name(const std::string& device) const {
  return configuration_stem(training.model, training.global_batch, gpus) + "_" + device +
         (trials > 1 ? "_t" + std::to_string(trial) : std::string());
}

std::string configuration_stem(const MlpSpec& model, int global_batch, int gpus) {
  return (model.name == "custom" ? model.widths_string() : model.name) + "_b" + std::to_string(global_batch) + "_n" +
         std::to_string(gpus);
}

std::string without_trial(const std::string& configuration_name) {
  static const std::regex trial_suffix("_t[0-9]+$");
  return std::regex_replace(configuration_name, trial_suffix, "");
}

}  // namespace mgpu
