// Purpose: the settings table's lookups, its generated texts and the grid rows' arguments (settings_table.hpp).
#include "config/settings_table.hpp"

namespace mgpu {

std::string model_arguments(const Configuration& c, const CommandContext&) {
  const MlpSpec& model = c.training.model;
  if (find_preset(model.name) != nullptr) return " --model " + model.name;
  return " --layers " + setting_text(model.widths);
}

std::string dropout_arguments(const Configuration& c, const CommandContext&) {
  // The default of --dropout: the preset's, and 0 for --layers.
  const MlpSpec& model = c.training.model;
  const MlpSpec* preset = find_preset(model.name);
  const double given = preset != nullptr ? preset->dropout : 0.0;
  return model.dropout == given ? "" : " --dropout " + setting_text(model.dropout);
}

std::string gpus_and_device_arguments(const Configuration&, const CommandContext& context) {
  return " --gpus " + context.gpus + (context.cuda ? "" : " --device cpu");
}

std::string runs_made_text(const Configuration& c) { return setting_text(c.training.runs); }

std::string given_elsewhere(const Configuration&, const CommandContext&) { return ""; }

const std::vector<SettingFacts>& settings_facts() {
  static const std::vector<SettingFacts> all = [] {
    std::vector<SettingFacts> rows;
    for_each_setting_row([&](const auto& row) { rows.push_back(row.facts); });
    return rows;
  }();
  return all;
}

const SettingFacts* find_setting_facts(std::string_view attribute) {
  for (const SettingFacts& row : settings_facts())
    if (attribute == row.attribute) return &row;
  return nullptr;
}

bool applies_only_with_overlap(std::string_view attribute) {
  const SettingFacts* row = find_setting_facts(attribute);
  return row != nullptr && row->applies == Applies::with_overlap;
}

bool decided_per_batch(std::string_view attribute) {
  const SettingFacts* row = find_setting_facts(attribute);
  return row != nullptr && (row->decided_per_batch || row->applies == Applies::with_overlap);
}

std::string command_line_default_text(std::string_view attribute) {
  std::string text;
  const StepRequest defaults;
  for_each_step_option([&](const auto& row) {
    using Setting = std::decay_t<decltype(TrainingSettings{}.*row.setting)>;
    using Request = std::decay_t<decltype(defaults.*row.request)>;
    if constexpr (std::is_same_v<Setting, Request>)
      if (attribute == row.facts.attribute && row.facts.applies == Applies::always) text = request_text(row, defaults);
  });
  return text;
}

std::string step_settings_text(const Configuration& configuration, bool own_gemms) {
  std::string text;
  for_each_step_option([&](const auto& row) {
    if (!setting_applies(row.facts.applies, configuration, own_gemms)) return;
    text += (text.empty() ? "" : " ") + std::string(row.facts.attribute) + "=" +
            setting_text(setting_of(row, configuration));
  });
  return text;
}

std::string math_reference_text(const TrainingSettings& settings) {
  Configuration configuration;
  configuration.training = settings;
  std::string text;
  for_each_setting_row([&](const auto& row) {
    if (row.facts.math_reference)
      text += (text.empty() ? "" : " ") + std::string(row.facts.attribute) + "=" +
              setting_text(setting_of(row, configuration));
  });
  return text;
}

}  // namespace mgpu
