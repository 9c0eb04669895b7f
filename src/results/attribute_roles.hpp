// Purpose: the roles of a configuration's attributes in one list, beside the rows that give them (the settings table's
// and results_schema.hpp's): what --resume's identity, the scaling table and compare pair on (AttributeRole), and the
// schema version that added each attribute, which a reader of an older file needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings_table.hpp"
#include "results/results_schema.hpp"

namespace mgpu::results_schema {

struct AttributeRoleEntry {
  std::string_view name;
  AttributeRole role;
  std::int32_t since_version;  // the schema version that added it (1: an original one)
};
// Every attribute of for_each_attribute_of_configuration, once, with its role and the version that added it: by role,
// scaled first, each role's in the order of the settings table and then of the rows above. The pairing identities
// list their attributes in this order. A reader of an older file that lacks an attribute added later keeps the
// default (version_one_configuration and the struct's defaults).
inline const std::vector<AttributeRoleEntry>& configuration_attribute_roles() {
  static const std::vector<AttributeRoleEntry> roles = [] {
    std::vector<AttributeRoleEntry> all;
    for (const SettingFacts& row : settings_facts()) all.push_back({row.attribute, row.role, row.since_version});
    const auto add = [&](const auto& row) { all.push_back({row.name, row.role, row.since_version}); };
    for_each_row(kAttributesBeforeSettings, add);
    for_each_row(kAttributesAfterSettings, add);
    std::stable_sort(all.begin(), all.end(),
                     [](const AttributeRoleEntry& a, const AttributeRoleEntry& b) { return a.role > b.role; });
    return all;
  }();
  return roles;
}

// The schema version that added attribute `name` (1 for the original ones): a reader of an older file that lacks it
// keeps the default.
inline std::int32_t attribute_added_in(std::string_view name) {
  for (const AttributeRoleEntry& entry : configuration_attribute_roles())
    if (entry.name == name) return entry.since_version;
  return added_in(kAddedOtherAttributes, name);
}

// The role of configuration attribute `name`; std::logic_error for a name no row has.
inline AttributeRole configuration_attribute_role(std::string_view name) {
  for (const AttributeRoleEntry& entry : configuration_attribute_roles())
    if (entry.name == name) return entry.role;
  throw std::logic_error("configuration attribute '" + std::string(name) +
                         "' has no row (config/settings_table.hpp, results_schema.hpp)");
}

}  // namespace mgpu::results_schema
