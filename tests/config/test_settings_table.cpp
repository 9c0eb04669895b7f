// Purpose: tests of the settings table (settings_table.hpp): one row per attribute and option, the columns each
// generated form reads (what applies when, what is decided per batch, the math check's key, the banner's words, the
// command line's defaults), and the lookups by member.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "config/settings_table.hpp"

namespace mgpu {
namespace {

TEST(SettingsTable, EveryAttributeAndEveryOptionOnce) {
  std::set<std::string> attributes, options;
  std::size_t rows = 0, step_options = 0;
  for_each_setting_row([&](const auto& row) {
    ++rows;
    attributes.insert(row.facts.attribute);
    EXPECT_GE(row.facts.since_version, 1) << row.facts.attribute;
    if constexpr (kIsStepOption<decltype(row)>) {
      ++step_options;
      options.insert(row.option);
      EXPECT_NE(std::string(row.help), "") << row.option;
    }
  });
  EXPECT_EQ(attributes.size(), rows);
  EXPECT_EQ(options.size(), step_options);
  EXPECT_EQ(settings_facts().size(), rows);
  EXPECT_EQ(step_options, 15u);
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
