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

// The readers' verdict of the math check comes from how the recorded text starts ("passed: ..." or "FAILED: ...");
// empty means the file predates the check.
TEST(ResultsSchema, CheckTextsAreJudgedByHowTheyStart) {
  using results_schema::math_check_verdict;
  using results_schema::MathCheckVerdict;
  EXPECT_EQ(math_check_verdict(""), MathCheckVerdict::not_checked);
  EXPECT_EQ(math_check_verdict("passed: relative error 1e-06 on rank 0"), MathCheckVerdict::passed);
  EXPECT_EQ(math_check_verdict("FAILED: relative error 0.5 on rank 1 (passed on rank 0)"), MathCheckVerdict::failed);
  EXPECT_EQ(math_check_verdict(" passed"), MathCheckVerdict::failed);
  EXPECT_EQ(math_check_verdict("Xpassed"), MathCheckVerdict::failed);
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
