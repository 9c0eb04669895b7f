// Purpose: tests of the results schema's own tables: every configuration attribute is one row with its role, so a
// new attribute cannot join or leave an identity without a decision in its row; the versions that added each name
// stay as they were, and the format's version is the newest.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "results/attribute_roles.hpp"
#include "results/results_schema.hpp"

namespace mgpu {
namespace {

using results_schema::AttributeRole;

// The attributes are rows (config/settings_table.hpp and results_schema.hpp): each name once, and the roles list
// is the visit list, by role.
TEST(ResultsSchema, EveryConfigurationAttributeIsOneRow) {
  std::vector<std::string> visited;
  const results_schema::ConfigurationMetadata metadata;
  results_schema::for_each_attribute_of_configuration(metadata,
                                                      [&](const char* name, const auto&) { visited.push_back(name); });
  std::map<std::string, int> times;
  for (const std::string& name : visited) ++times[name];
  for (const auto& [name, count] : times) EXPECT_EQ(count, 1) << name;
  std::vector<std::string> roles;
  for (const results_schema::AttributeRoleEntry& entry : results_schema::configuration_attribute_roles()) {
    roles.emplace_back(entry.name);
    EXPECT_EQ(results_schema::configuration_attribute_role(entry.name), entry.role) << entry.name;
  }
  std::sort(visited.begin(), visited.end());
  std::sort(roles.begin(), roles.end());
  EXPECT_EQ(roles, visited);
  // By role, scaled first: the identities nest as prefixes of the list.
  const auto& entries = results_schema::configuration_attribute_roles();
  for (std::size_t i = 1; i < entries.size(); ++i) EXPECT_GE(entries[i - 1].role, entries[i].role) << entries[i].name;
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
    EXPECT_NE(std::string(error.what()).find("'new_setting' has no row"), std::string::npos) << error.what();
  }
}

// The versions that added each name are history: files of those versions exist, so a row's version never changes
// (test_results_file.cpp pins the reader to the table; this pins the table). A new name gets its version here too.
TEST(ResultsSchema, AddedNamesKeepTheVersionsThatAddedThem) {
  std::map<std::string, int> added;
  for (const results_schema::AttributeRoleEntry& entry : results_schema::configuration_attribute_roles())
    if (entry.since_version > 1) added[std::string(entry.name)] = entry.since_version;
  for (const results_schema::AddedName& entry : results_schema::kAddedOtherAttributes)
    added[entry.name] = entry.since_version;
  const std::map<std::string, int> history = {{"environment_preset", 2},
                                              {"attempt", 2},
                                              {"implementation", 2},
                                              {"graph", 2},
                                              {"overlap", 2},
                                              {"bucket_mb", 2},
                                              {"grad_dtype", 2},
                                              {"accumulate_steps", 2},
                                              {"timing", 2},
                                              {"fused_optimizer", 4},
                                              {"overlap_order", 5},
                                              {"gemm_tuning", 6},
                                              {"gemm_choices", 6},
                                              {"interrupted", 7},
                                              {"interrupted_utc", 7},
                                              {"step_labels", 8},
                                              {"replica_check", 9},
                                              {"trial", 9},
                                              {"math_check", 10},
                                              {"math_check_errors", 10},
                                              {"math_check_tolerance", 10},
                                              {"math_check_steps", 10},
                                              {"math_check_seconds", 10},
                                              {"gemm_candidates_checked", 10},
                                              {"gemm_candidates_rejected", 10},
                                              {"stopped_early", 10},
                                              {"optimizer_sharding", 11},
                                              {"overlap_update", 12},
                                              {"nodes", 13},
                                              {"gpus_per_node", 13},
                                              {"nics_per_node", 13},
                                              {"network", 13},
                                              {"nccl_max_ctas", 14},
                                              {"overlap_sm_target", 14},
                                              {"setup", 15},
                                              {"unique_id_check", 15},
                                              {"job_notice", 15},
                                              {"job_plan", 15},
                                              {"step_kernel", 17},
                                              {"step_kernel_chosen", 17}};
  EXPECT_EQ(added, history);
  // The format's version is the newest of them, or of a change that added no name (16: precision "tf32x3").
  EXPECT_EQ(results_schema::kNewestChangeWithoutAName, 16);
  EXPECT_EQ(results_schema::kVersion, 17);
  for (const auto& [name, version] : history) EXPECT_EQ(results_schema::attribute_added_in(name), version) << name;
  EXPECT_EQ(results_schema::attribute_added_in("seed"), 1);
  std::vector<std::pair<std::string, int>> datasets;
  for (const results_schema::AddedName& entry : results_schema::kAddedDatasets)
    datasets.emplace_back(entry.name, entry.since_version);
  EXPECT_EQ(datasets, (std::vector<std::pair<std::string, int>>{
                          {"wall_per_step_ms", 3}, {"phases_marked", 7}, {"batch_generation_ms", 7}}));
}

}  // namespace
}  // namespace mgpu
