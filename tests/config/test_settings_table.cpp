// Purpose: tests of the settings table (settings_table.hpp): one row per attribute and option, the columns each
// generated form reads (what applies when, what is decided per batch, the math check's key, the banner's words, the
// command line's defaults), and the lookups by member.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "config/settings_table.hpp"

namespace mgpu {
namespace {

TEST(SettingsTable, EveryAttributeAndEveryOptionOnce) {
  std::set<std::string> attributes, options, recorded_options;
  std::size_t rows = 0, step_options = 0;
  for_each_setting_row([&](const auto& row) {
    ++rows;
    attributes.insert(row.facts.attribute);
    EXPECT_GE(row.facts.since_version, 1) << row.facts.attribute;
    if constexpr (kIsStepOption<decltype(row)>) {
      ++step_options;
      options.insert(row.option);
      EXPECT_NE(std::string(row.help), "") << row.option;
    } else if (row.option != nullptr) {
      recorded_options.insert(row.option);
      EXPECT_NE(std::string(row.help), "") << row.option;
    }
  });
  EXPECT_EQ(attributes.size(), rows);
  EXPECT_EQ(options.size(), step_options);
  EXPECT_EQ(settings_facts().size(), rows);
  EXPECT_EQ(step_options, 15u);
  // The recorded settings an option sets: the grid's, then the ones given as they are.
  EXPECT_EQ(recorded_options, (std::set<std::string>{"model", "layers", "dropout", "batch", "gpus", "warmup", "steps",
                                                     "runs", "seed", "nccl-algo", "nccl-proto"}));
  for (const std::string& option : recorded_options) EXPECT_EQ(options.count(option), 0u) << option;
}

// The banner's settings after the grid's: every row with a banner word, in the table's order; the runs a configuration
// makes for the runs it asked for (interleaved timing adds its phase-marked ones).
TEST(SettingsTable, TheBannerNamesTheRowsWithABannerWord) {
  Configuration c;
  c.runs_requested = 50;
  c.training.runs = runs_made(c.runs_requested, TimingMode::interleaved);
  EXPECT_EQ(banner_settings_text(c), ", warm-up 10, steps 100, runs 62, seed 1");
  c.training.seed = 18446744073709551615ull;
  c.training.warmup_steps = 0;
  EXPECT_EQ(banner_settings_text(c), ", warm-up 0, steps 100, runs 62, seed 18446744073709551615");
}

// NCCL's algorithm and protocol are one group (compare may leave it out, a label names it once); nothing else is.
TEST(SettingsTable, OnlyNcclsChoicesAreAGroup) {
  std::set<std::string> grouped;
  for (const SettingFacts& row : settings_facts())
    if (row.group != nullptr) grouped.insert(std::string(row.group) + ":" + row.attribute);
  EXPECT_EQ(grouped, (std::set<std::string>{"nccl:nccl_algo", "nccl:nccl_proto"}));
}

TEST(SettingsTable, OnlyTheOverlapsOwnSettingsApplyOnlyWithOverlap) {
  std::set<std::string> only_with_overlap;
  Configuration without_overlap, with_overlap;
  with_overlap.training.overlap = true;
  for_each_recorded_setting(without_overlap, true, [&](const char* name, const auto&, bool applies) {
    if (!applies) only_with_overlap.insert(name);
  });
  EXPECT_EQ(only_with_overlap,
            (std::set<std::string>{"overlap_order", "bucket_mb", "overlap_update", "overlap_sm_target"}));
  for (const std::string& name : only_with_overlap) EXPECT_TRUE(applies_only_with_overlap(name)) << name;
  for_each_recorded_setting(with_overlap, true,
                            [&](const char* name, const auto&, bool applies) { EXPECT_TRUE(applies) << name; });
  EXPECT_FALSE(applies_only_with_overlap("overlap"));
  EXPECT_FALSE(applies_only_with_overlap("no_such_setting"));
}

// A reader restores each setting as it is visited and decides where the next one applies from those before it: every
// setting that always applies (overlap among them) is visited before any that applies only somewhere.
TEST(SettingsTable, SettingsThatAlwaysApplyAreVisitedFirst) {
  std::vector<std::string> order;
  Configuration c;
  c.training.overlap = true;
  for_each_recorded_setting(c, true, [&](const char* name, const auto&, bool) { order.push_back(name); });
  ASSERT_EQ(order.size(), settings_facts().size());
  bool conditional_seen = false;
  for (const std::string& name : order) {
    const bool always = find_setting_facts(name)->applies == Applies::always;
    EXPECT_FALSE(conditional_seen && always) << name << " is visited after a setting that applies only somewhere";
    conditional_seen = conditional_seen || !always;
  }
  EXPECT_TRUE(conditional_seen);
  EXPECT_LT(std::find(order.begin(), order.end(), "overlap"), std::find(order.begin(), order.end(), "overlap_order"));
}

TEST(SettingsTable, HowGemmsWereChosenAppliesOnlyWhereThisProgramChoseThem) {
  std::set<std::string> not_applying;
  Configuration c;
  c.training.overlap = true;
  for_each_recorded_setting(c, false, [&](const char* name, const auto&, bool applies) {
    if (!applies) not_applying.insert(name);
  });
  EXPECT_EQ(not_applying, (std::set<std::string>{"gemm_tuning", "step_kernel"}));
}

// The answer's curves do not split on these (answer.cpp): what --overlap auto and --fuse-optimizer auto decide per
// local batch, and what exists only with overlap.
TEST(SettingsTable, TheSettingsDecidedPerBatch) {
  std::set<std::string> per_batch;
  for (const SettingFacts& row : settings_facts())
    if (decided_per_batch(row.attribute)) per_batch.insert(row.attribute);
  EXPECT_EQ(per_batch, (std::set<std::string>{"overlap", "overlap_order", "bucket_mb", "overlap_update",
                                              "overlap_sm_target", "fused_optimizer"}));
  EXPECT_FALSE(decided_per_batch("no_such_setting"));
}

TEST(SettingsTable, AttributesByMember) {
  EXPECT_STREQ(attribute_of(&TrainingSettings::timing), "timing");
  EXPECT_STREQ(attribute_of(&TrainingSettings::fused_optimizer), "fused_optimizer");
  EXPECT_STREQ(attribute_of(&TrainingSettings::global_batch), "global_batch");
  EXPECT_STREQ(attribute_of(&TrainingSettings::warmup_steps), "warmup_steps");
  EXPECT_STREQ(attribute_of(&MlpSpec::dropout), "dropout");
  EXPECT_STREQ(attribute_of(&Configuration::gpus), "ranks");
  EXPECT_STREQ(attribute_of(&AdamSettings::beta2), "adam_beta2");
  EXPECT_EQ(attribute_of(&TrainingSettings::runs), nullptr);  // made, not recorded
}

// The banner's words are the results file's: attribute=value for every step option that applies.
TEST(SettingsTable, TheStepLineNamesEveryStepOptionThatApplies) {
  Configuration c;
  c.training.timing = TimingMode::interleaved;
  c.training.gemm_tuning = GemmTuning::step;
  EXPECT_EQ(step_settings_text(c, true),
            "graph=on overlap=off fused_optimizer=off optimizer_sharding=off grad_dtype=fp32 nccl_max_ctas=0 "
            "precision=fp32 accumulate_steps=1 timing=interleaved step_kernel=chain gemm_tuning=step");
  c.training.overlap = true;
  c.training.bucket_mb = 0.5;
  c.training.overlap_update = OverlapUpdate::after_last;
  EXPECT_EQ(
      step_settings_text(c, false),
      "graph=on overlap=on overlap_order=deferred bucket_mb=0.5 overlap_update=after-last overlap_sm_target=0 "
      "fused_optimizer=off optimizer_sharding=off grad_dtype=fp32 nccl_max_ctas=0 precision=fp32 accumulate_steps=1 "
      "timing=interleaved");
}

// Everything the float64 reference step depends on, and nothing it does not (the GPU count, graph, overlap, fusion,
// the reduction's precision, tuning, timing, steps and runs).
TEST(SettingsTable, TheMathReferenceKeyNamesWhatTheReferenceDependsOn) {
  TrainingSettings s;
  s.model = custom_model({16, 8, 3}, 0.25);
  EXPECT_EQ(math_reference_text(s),
            "layer_widths=16,8,3 dropout=0.25 global_batch=32 precision=fp32 accumulate_steps=1 seed=1 "
            "adam_learning_rate=0.001 adam_beta1=0.9 adam_beta2=0.999 adam_epsilon=1e-07");
  TrainingSettings other = s;
  other.graph = !s.graph;
  other.overlap = true;
  other.fused_optimizer = true;
  other.grad_dtype = GradDtype::bf16;
  other.timing = TimingMode::none;
  other.measured_steps = 3;
  EXPECT_EQ(math_reference_text(other), math_reference_text(s));
}

TEST(SettingsTable, CommandLineDefaultsOfSettingsTakenAsGiven) {
  EXPECT_EQ(command_line_default_text("timing"), "interleaved");
  EXPECT_EQ(command_line_default_text("precision"), "fp32");
  EXPECT_EQ(command_line_default_text("overlap"), "");       // a Toggle: auto is no setting's value
  EXPECT_EQ(command_line_default_text("bucket_mb"), "");     // only with overlap
  EXPECT_EQ(command_line_default_text("warmup_steps"), "");  // no step option
}

}  // namespace
}  // namespace mgpu
