// Purpose: identity keys of configurations, defined once.
#include "stats/pairing_identity.hpp"

#include <algorithm>
#include <cstring>
#include <map>

#include "results/attribute_roles.hpp"

namespace mgpu::stats {

namespace {

// The attributes of the given roles, in the order of configuration_attribute_roles.
std::vector<IdentityAttribute> attributes_of_role_at_least(AttributeRole lowest) {
  std::vector<IdentityAttribute> attributes;
  for (const results_schema::AttributeRoleEntry& entry : results_schema::configuration_attribute_roles())
    if (entry.role >= lowest) attributes.push_back({entry.name.data()});
  return attributes;
}

}  // namespace

const std::vector<IdentityAttribute>& scaling_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = attributes_of_role_at_least(AttributeRole::scaled);
  return attributes;
}

const std::vector<IdentityAttribute>& comparison_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = attributes_of_role_at_least(AttributeRole::compared);
  return attributes;
}

std::vector<IdentityAttribute> without_global_batch(const std::vector<IdentityAttribute>& attributes) {
  std::vector<IdentityAttribute> kept;
  for (const IdentityAttribute& a : attributes)
    if (std::strcmp(a.name, attribute_of(&TrainingSettings::global_batch)) != 0) kept.push_back(a);
  return kept;
}

bool is_nccl_setting(const IdentityAttribute& attribute) {
  const SettingFacts* row = find_setting_facts(attribute.name);
  return row != nullptr && row->group != nullptr && std::strcmp(row->group, kNcclGroup) == 0;
}

namespace {

// The texts of a default ConfigurationMetadata: what a file that lacks an attribute added after schema_version 1
// implies (results_schema.hpp: the struct's defaults are what a version-1 run did).
const std::map<std::string, std::string>& defaults() {
  static const std::map<std::string, std::string> texts = attribute_texts(ConfigurationMetadata{});
  return texts;
}

bool has_default(const char* name) { return results_schema::attribute_added_in(name) > 1; }

// The attribute's text, or where the file lacks it, what the defaults imply.
std::string text_or_default(const ConfigurationResults& configuration, const std::string& name) {
  const auto found = configuration.attribute_text.find(name);
  return found != configuration.attribute_text.end() ? found->second : defaults().at(name);
}

// " nccl Tree/Simple": every group of settings (settings_table.hpp) with any of its values off the default, named
// once with its values joined.
std::string grouped_settings_label(const ConfigurationResults& configuration) {
  std::vector<std::string> groups;
  for (const SettingFacts& row : settings_facts())
    if (row.group != nullptr && std::find(groups.begin(), groups.end(), row.group) == groups.end())
      groups.push_back(row.group);
  std::string label;
  for (const std::string& group : groups) {
    std::string values;
    bool off_default = false;
    for (const SettingFacts& row : settings_facts()) {
      if (row.group == nullptr || group != row.group) continue;
      const std::string value = text_or_default(configuration, row.attribute);
      off_default = off_default || value != defaults().at(row.attribute);
      values += (values.empty() ? "" : "/") + value;
    }
    if (off_default) label += " " + group + " " + values;
  }
  return label;
}

}  // namespace

std::string attribute_or_default(const ConfigurationResults& configuration, const IdentityAttribute& attribute) {
  const auto found = configuration.attribute_text.find(attribute.name);
  if (found != configuration.attribute_text.end()) return found->second;
  return has_default(attribute.name) ? defaults().at(attribute.name) : "";
}

std::vector<std::string> identity_key(const ConfigurationResults& configuration,
                                      const std::vector<IdentityAttribute>& attributes) {
  std::vector<std::string> key;
  key.reserve(attributes.size());
  for (const IdentityAttribute& attribute : attributes) key.push_back(attribute_or_default(configuration, attribute));
  return key;
}

std::string configuration_label(const ConfigurationResults& configuration) {
  std::string label = configuration.metadata.name + grouped_settings_label(configuration);
  for (const IdentityAttribute& attribute : comparison_identity_attributes()) {
    if (!has_default(attribute.name)) continue;
    const std::string value = attribute_or_default(configuration, attribute);
    // A setting at the command line's default goes unremarked too: timing interleaved, mgpu_bench's default since
    // schema_version 7, like events, what older files imply.
    if (value != defaults().at(attribute.name) && value != command_line_default_text(attribute.name))
      label += std::string(" ") + attribute.name + "=" + value;
  }
  return label;
}

}  // namespace mgpu::stats
