// Purpose: tests of configuration_record (results/configuration_record.hpp) through the schema's attribute list: every
// recorded setting of a resolved configuration, written as the file's attributes and read back into an empty
// configuration group, comes back as it was, over configurations that set every setting away from its default; the
// texts are the file's vocabulary, "n/a" or 0 where a setting does not apply.
#include <gtest/gtest.h>

#include <any>
#include <map>
#include <string>
#include <vector>

#include "config/resolver.hpp"
#include "results/configuration_record.hpp"

namespace mgpu {
namespace {

using results_schema::ConfigurationMetadata;
using AttributeStore = std::map<std::string, std::any>;  // an attribute's name to its value, typed as in the file

Configuration configuration(const MlpSpec& model, int global_batch, int gpus, const StepRequest& request,
                            bool cuda_backend) {
  Configuration c;
  c.training.model = model;
  c.training.global_batch = global_batch;
  c.training.warmup_steps = 3;
  c.training.measured_steps = 17;
  c.training.seed = 99;
  c.training.adam.learning_rate = 2e-3f;
  c.training.adam.beta1 = 0.8f;
  c.training.adam.beta2 = 0.99f;
  c.training.adam.epsilon = 1e-6f;
  c.runs_requested = 7;
  c.training.runs = runs_made(7, request.timing);
  resolve_step(request, cuda_backend, gpus, c.training);
  c.gpus = gpus;
  c.trial = 2;
  c.trials = 3;
  return c;
}

AttributeStore written(const ConfigurationMetadata& meta) {
  AttributeStore store;
  results_schema::for_each_attribute_of_configuration(
      meta, [&](const char* name, const auto& value) { store[name] = value; });
  return store;
}

ConfigurationMetadata read_back(const AttributeStore& store) {
  ConfigurationMetadata meta;
  results_schema::for_each_attribute_of_configuration(meta, [&](const char* name, auto& value) {
    value = std::any_cast<std::remove_reference_t<decltype(value)>>(store.at(name));
  });
  return meta;
}

// Every recorded setting that applies, compared pairwise with its counterpart.
void expect_same(const Configuration& expected, const Configuration& got, const std::string& what, bool own_gemms) {
  std::vector<std::string> names;
  std::vector<bool> applies;
  for_each_recorded_setting(expected, own_gemms, [&](const char* name, const auto&, bool a) {
    names.push_back(name);
    applies.push_back(a);
  });
  std::size_t i = 0;
  for_each_recorded_setting(expected, own_gemms, [&](const char*, const auto& want, bool) {
    std::size_t j = 0;
    for_each_recorded_setting(got, own_gemms, [&](const char*, const auto& have, bool) {
      if constexpr (std::is_same_v<decltype(want), decltype(have)>) {
        if (i == j && applies[i]) EXPECT_TRUE(want == have) << what << ": " << names[i];
      }
      ++j;
    });
    ++i;
  });
  EXPECT_EQ(runs_made(got.runs_requested, got.training.timing), expected.runs()) << what;
}

TEST(ConfigurationRecord, EveryRecordedSettingComesBackAsItWas) {
  StepRequest plain;
  StepRequest everything;  // every setting away from its default where two GPUs allow it
  everything.graph = Toggle::off;
  everything.overlap = Toggle::on;
  everything.overlap_order = WeightGradientOrder::layerwise;
  everything.overlap_update = OverlapUpdate::after_last;
  everything.bucket_mb = 2.5;
  everything.precision = Precision::bf16;
  everything.timing = TimingMode::step;
  everything.grad_dtype = GradDtype::bf16;
  everything.accumulate_steps = 3;
  everything.gemm_tuning = GemmTuning::alone;
  StepRequest sharded;
  sharded.optimizer_sharding = Toggle::on;
  sharded.timing = TimingMode::none;
  StepRequest fused;
  fused.fuse_optimizer = Toggle::on;
  fused.timing = TimingMode::events;
  struct Case {
    Configuration c;
    std::string device;
  };
  const std::vector<Case> cases = {
      {configuration(preset_model("large"), 32, 2, plain, true), "cuda"},
      {configuration(preset_model("medium"), 4096, 4, plain, true), "cuda"},  // overlap by auto
      {configuration(preset_model("medium"), 64, 2, everything, true), "cuda"},
      {configuration(preset_model("large"), 64, 4, sharded, true), "cuda"},
      {configuration(preset_model("large"), 1024, 1, fused, true), "cuda"},
      {configuration(custom_model({37, 100, 33, 5}, 0.1), 24, 2, plain, false), "cpu"},
  };
  for (const Case& c : cases) {
    ConfigurationMetadata meta;
    record_configuration(c.c, c.device, meta);
    EXPECT_EQ(meta.name, c.c.name(c.device));
    const ConfigurationMetadata back = read_back(written(meta));
    expect_same(c.c, back.configuration, meta.name, c.device == "cuda");
  }
  // The texts themselves: the file's vocabulary, and "n/a" or 0 where a setting does not apply.
  ConfigurationMetadata meta;
  const auto text = [&](const char* name) { return std::any_cast<std::string>(written(meta).at(name)); };
  const auto number = [&](const char* name) { return std::any_cast<double>(written(meta).at(name)); };
  record_configuration(cases[2].c, "cuda", meta);
  EXPECT_EQ(text("graph"), "off");
  EXPECT_EQ(text("overlap"), "on");
  EXPECT_EQ(text("overlap_order"), "layerwise");
  EXPECT_EQ(text("overlap_update"), "after-last");
  EXPECT_EQ(text("precision"), "bf16");
  EXPECT_EQ(text("grad_dtype"), "bf16");
  EXPECT_EQ(text("timing"), "step");
  EXPECT_EQ(text("gemm_tuning"), "alone");
  EXPECT_EQ(number("bucket_mb"), 2.5);
  EXPECT_EQ(number("adam_learning_rate"), static_cast<double>(2e-3f));  // a float setting, a double attribute
  EXPECT_EQ(meta.local_batch, 32);
  record_configuration(cases[0].c, "cuda", meta);
  EXPECT_EQ(text("overlap_order"), "n/a");
  EXPECT_EQ(text("overlap_update"), "n/a");
  EXPECT_EQ(number("bucket_mb"), 0.0);
  record_configuration(cases[5].c, "cpu", meta);
  EXPECT_EQ(text("gemm_tuning"), "n/a");
  EXPECT_EQ(text("model"), "custom");
  EXPECT_EQ(std::any_cast<std::vector<int>>(written(meta).at("layer_widths")), (std::vector<int>{37, 100, 33, 5}));
}

// A file lacking an attribute added after version 1 reads as what a version-1 run did: the step not a graph, no
// overlap, one GEMM tuning of each shape alone.
TEST(ConfigurationRecord, AnEmptyGroupReadsAsAVersionOneRun) {
  const ConfigurationMetadata meta;
  const AttributeStore store = written(meta);
  EXPECT_EQ(std::any_cast<std::string>(store.at("graph")), "off");
  EXPECT_EQ(std::any_cast<std::string>(store.at("overlap")), "off");
  EXPECT_EQ(std::any_cast<std::string>(store.at("overlap_order")), "n/a");
  EXPECT_EQ(std::any_cast<std::string>(store.at("timing")), "events");
  EXPECT_EQ(std::any_cast<std::string>(store.at("gemm_tuning")), "n/a");  // no device recorded
  EXPECT_EQ(std::any_cast<std::int32_t>(store.at("trial")), 1);
}

}  // namespace
}  // namespace mgpu
