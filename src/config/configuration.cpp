// Purpose: a configuration's names (configuration.hpp).
#include "config/configuration.hpp"

#include <regex>
#include <set>

namespace mgpu {

std::string Configuration::name(const std::string& device) const {
  return configuration_stem(training.model, training.global_batch, gpus) + "_" + device +
         (trials > 1 ? "_t" + std::to_string(trial) : std::string());
}

std::string configuration_stem(const MlpSpec& model, int global_batch, int gpus) {
  return (model.name == "custom" ? model.widths_string() : model.name) + "_b" + std::to_string(global_batch) + "_n" +
         std::to_string(gpus);
}

bool applies_only_with_overlap(const std::string& name) {
  // Read from the list once: the answer asks for every attribute of every pair.
  static const std::set<std::string> only_with_overlap = [] {
    Configuration without_overlap;
    without_overlap.training.overlap = false;
    std::set<std::string> names;
    for_each_recorded_setting(without_overlap, [&](const char* setting, const auto&, bool applies) {
      if (!applies) names.insert(setting);
    });
    return names;
  }();
  return only_with_overlap.count(name) > 0;
}

std::string without_trial(const std::string& configuration_name) {
  static const std::regex trial_suffix("_t[0-9]+$");
  return std::regex_replace(configuration_name, trial_suffix, "");
}

}  // namespace mgpu
