// Purpose: tests of configuration_record (results/configuration_record.hpp): every recorded setting of a resolved
// configuration survives the file's texts and comes back as it was, over configurations that set every setting
// away from its default; a text no setting has is refused naming the attribute.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/resolver.hpp"
#include "platform/error.hpp"
#include "results/configuration_record.hpp"

namespace mgpu {
namespace {

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
  c.training.runs = request.timing == TimingMode::interleaved ? interleaved_run_count(7) : 7;
  resolve_step(request, cuda_backend, gpus, c.training);
  c.gpus = gpus;
  c.trial = 2;
  c.trials = 3;
  return c;
}

// Every setting the visitor names, compared pairwise, and what is mapped by hand.
void expect_same(const Configuration& expected, const Configuration& got, const std::string& what) {
  std::vector<std::string> names;
  for_each_recorded_setting(expected, [&](const char* name, const auto&) { names.push_back(name); });
  std::size_t i = 0;
  for_each_recorded_setting(expected, [&](const char*, const auto& want) {
    std::size_t j = 0;
    for_each_recorded_setting(got, [&](const char*, const auto& have) {
      if constexpr (std::is_same_v<decltype(want), decltype(have)>) {
        if (i == j) EXPECT_TRUE(want == have) << what << ": " << names[i];
      }
      ++j;
    });
    ++i;
  });
  EXPECT_EQ(got.model().widths, expected.model().widths) << what;
  EXPECT_EQ(got.model().dropout, expected.model().dropout) << what;
  EXPECT_EQ(got.model().name, expected.model().name) << what;
  EXPECT_EQ(got.runs(), expected.runs()) << what;
  EXPECT_EQ(got.training.gemm_tuning, expected.training.gemm_tuning) << what;
  if (expected.training.overlap) {
    EXPECT_EQ(got.training.overlap_order, expected.training.overlap_order) << what;
    EXPECT_EQ(got.training.bucket_mb, expected.training.bucket_mb) << what;
  }
}

TEST(ConfigurationRecord, EveryRecordedSettingComesBackAsItWas) {
  StepRequest plain;
  StepRequest everything;  // every setting away from its default where two GPUs allow it
  everything.graph = Toggle::off;
  everything.overlap = Toggle::on;
  everything.overlap_order = WeightGradientOrder::layerwise;
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
    results_schema::ConfigurationMetadata meta;
    record_configuration(c.c, c.device, meta);
    EXPECT_EQ(meta.name, c.c.name(c.device));
    expect_same(c.c, configuration_from(meta), meta.name);
  }
  // The texts themselves: the file's vocabulary, and "n/a" or 0 where a setting does not apply.
  results_schema::ConfigurationMetadata meta;
  record_configuration(cases[2].c, "cuda", meta);
  EXPECT_EQ(meta.graph, "off");
  EXPECT_EQ(meta.overlap, "on");
  EXPECT_EQ(meta.overlap_order, "layerwise");
  EXPECT_EQ(meta.precision, "bf16");
  EXPECT_EQ(meta.grad_dtype, "bf16");
  EXPECT_EQ(meta.timing, "step");
  EXPECT_EQ(meta.local_batch, 32);
  record_configuration(cases[0].c, "cuda", meta);
  EXPECT_EQ(meta.overlap_order, "n/a");
  EXPECT_EQ(meta.bucket_mb, 0.0);
  record_configuration(cases[5].c, "cpu", meta);
  EXPECT_EQ(meta.gemm_tuning, "n/a");
  EXPECT_EQ(meta.model, "custom");
}

TEST(ConfigurationRecord, ATextNoSettingHasIsRefusedNamingTheAttribute) {
  results_schema::ConfigurationMetadata meta;
  record_configuration(configuration(preset_model("large"), 32, 2, StepRequest{}, true), "cuda", meta);
  meta.precision = "fp8";
  try {
    configuration_from(meta);
    ADD_FAILURE() << "fp8 accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "attribute precision: 'fp8' is no value of this setting");
  }
  meta.precision = "fp32";
  meta.graph = "maybe";
  EXPECT_THROW(configuration_from(meta), UsageError);
}

}  // namespace
}  // namespace mgpu
