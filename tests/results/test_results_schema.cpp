// Purpose: tests of the results schema's own tables: every configuration attribute has exactly one role, so a new
// attribute cannot join or leave an identity without a decision in results_schema.hpp.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "results/results_schema.hpp"

namespace mgpu {
namespace {

using results_schema::AttributeRole;

// How many times each attribute name appears in kConfigurationAttributeRoles.
std::map<std::string, int> role_entries() {
  std::map<std::string, int> entries;
  for (const results_schema::AttributeRoleEntry& entry : results_schema::kConfigurationAttributeRoles)
    ++entries[std::string(entry.name)];
  return entries;
}

TEST(ResultsSchema, EveryConfigurationAttributeHasExactlyOneRole) {
  const std::map<std::string, int> entries = role_entries();
  std::map<std::string, int> visited;
  const results_schema::ConfigurationMetadata metadata;
  results_schema::for_each_attribute_of_configuration(metadata,
                                                      [&](const char* name, const auto&) { ++visited[name]; });
  for (const auto& [name, count] : visited) {
    const auto found = entries.find(name);
    EXPECT_TRUE(found != entries.end() && found->second == 1) << name << " needs exactly one role";
  }
  for (const auto& [name, count] : entries)
    EXPECT_EQ(visited.count(name), 1u) << name << " has a role but is no configuration attribute";
}

TEST(ResultsSchema, RolesNameWhatEachIdentityHolds) {
  EXPECT_EQ(results_schema::configuration_attribute_role("seed"), AttributeRole::scaled);
  EXPECT_EQ(results_schema::configuration_attribute_role("ranks"), AttributeRole::compared);
  EXPECT_EQ(results_schema::configuration_attribute_role("gemm_tuning"), AttributeRole::setting);
  EXPECT_EQ(results_schema::configuration_attribute_role("hosts"), AttributeRole::condition);
  EXPECT_EQ(results_schema::configuration_attribute_role("gemm_choices"), AttributeRole::condition);
  // Each role includes the ones before it in the enumeration: the identities nest.
  EXPECT_LT(AttributeRole::condition, AttributeRole::setting);
  EXPECT_LT(AttributeRole::setting, AttributeRole::compared);
  EXPECT_LT(AttributeRole::compared, AttributeRole::scaled);
}

TEST(ResultsSchema, AnAttributeWithoutARoleIsRefusedByName) {
  try {
    results_schema::configuration_attribute_role("new_setting");
    FAIL() << "no exception";
  } catch (const std::logic_error& error) {
    EXPECT_NE(std::string(error.what()).find("'new_setting' has no role"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace mgpu
