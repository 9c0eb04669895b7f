// Purpose: tests of the command that reproduces a configuration (reproducing_command.hpp) as the parser's exact
// inverse: for configurations with every setting moved off its default, on the CUDA back-end and the CPU fallback, the
// command parsed (cli/options.hpp) and planned (study/sweep_plan.hpp) as mgpu_bench does gives back every recorded
// setting of the N-GPU configuration, and a 1-GPU configuration that pairs with it; what no option gives is named.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "config/reproducing_command.hpp"
#include "config/resolver.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {
namespace {

// The configuration mgpu_bench resolves from `request` for `gpus` GPUs.
Configuration resolved(const StepRequest& request, bool cuda, int gpus, const MlpSpec& model, int global_batch) {
  Configuration c;
  c.gpus = gpus;
  c.training.model = model;
  c.training.global_batch = global_batch;
  c.training.warmup_steps = 3;
  c.training.measured_steps = 7;
  c.training.seed = 11;
  c.runs_requested = 4;
  c.training.runs = runs_made(c.runs_requested, request.timing);
  resolve_step(request, cuda, gpus, c.training);
  return c;
}

// The arguments parsed as mgpu_bench's command line.
BenchOptions parsed(const std::string& arguments) {
  std::istringstream words(arguments);
  std::vector<std::string> argv_text = {"mgpu_bench"};
  for (std::string word; words >> word;) argv_text.push_back(word);
  std::vector<const char*> argv;
  for (const std::string& word : argv_text) argv.push_back(word.c_str());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

// Every recorded setting's text (own_gemms: as on the CUDA back-end); `lowest`: only the settings of that role or
// above.
std::map<std::string, std::string> recorded_texts(const Configuration& c, bool own_gemms,
                                                  AttributeRole lowest = AttributeRole::condition) {
  std::map<std::string, std::string> texts;
  for_each_recorded_setting(c, own_gemms, [&](const char* name, const auto& setting, bool applies) {
    if (find_setting_facts(name)->role >= lowest) texts[name] = applies ? setting_text(setting) : "n/a";
  });
  return texts;
}

// The command of `original` on 1 and N GPUs, parsed and planned, gives back the N-GPU configuration exactly and a
// 1-GPU one of the same scaling identity; the request it parses to is reproducing_request's.
void expect_reproduced(const Configuration& original, bool cuda) {
  const std::string gpus = original.gpus == 1 ? "1" : "1," + std::to_string(original.gpus);
  const ReproducingCommand command = reproducing_command(original, {gpus, cuda});
  SCOPED_TRACE(command.arguments);
  EXPECT_TRUE(command.unreproduced.empty());
  const BenchOptions options = parsed(command.arguments);
  std::vector<std::string> unreproduced;
  const StepRequest request = reproducing_request(original, cuda, unreproduced);
  for_each_step_option(
      [&](const auto& row) { EXPECT_TRUE(options.step.*row.request == request.*row.request) << row.option; });
  const std::vector<Configuration> plan = plan_sweep(options, original.gpus, cuda);
  ASSERT_EQ(plan.size(), original.gpus == 1 ? 1u : 2u);
  EXPECT_EQ(recorded_texts(plan.back(), cuda), recorded_texts(original, cuda));
  EXPECT_EQ(recorded_texts(plan.front(), cuda, AttributeRole::scaled),
            recorded_texts(original, cuda, AttributeRole::scaled));
  EXPECT_EQ(plan.back().training.runs, original.training.runs);
}

// Each step option off its default, on 2 and 4 GPUs, with the settings that do not apply on 1 GPU.
TEST(ReproducingCommand, EveryStepOptionOffItsDefaultOnCuda) {
  StepRequest everything;
  everything.graph = Toggle::off;
  everything.overlap = Toggle::on;
  everything.overlap_order = WeightGradientOrder::layerwise;
  everything.bucket_mb = 2.5;
  everything.overlap_update = OverlapUpdate::after_last;
  everything.fuse_optimizer = Toggle::off;
  everything.grad_dtype = GradDtype::bf16;
  everything.precision = Precision::tf32;
  everything.accumulate_steps = 3;
  everything.timing = TimingMode::events;
  everything.gemm_tuning = GemmTuning::alone;
  everything.nccl_max_ctas = 4;
  everything.overlap_sm_target = 100;
  StepRequest sharded;
  sharded.optimizer_sharding = Toggle::on;
  sharded.overlap = Toggle::off;
  sharded.timing = TimingMode::none;
  sharded.precision = Precision::bf16;
  for (const int gpus : {2, 4}) {
    expect_reproduced(resolved(everything, true, gpus, preset_model("large"), 64), true);
    expect_reproduced(resolved(sharded, true, gpus, preset_model("medium"), 64), true);
    expect_reproduced(resolved(StepRequest{}, true, gpus, custom_model({20, 12, 3}, 0.1), 32), true);
  }
  // One GPU: the fused optimizer off where auto turns it on.
  StepRequest unfused;
  unfused.fuse_optimizer = Toggle::off;
  expect_reproduced(resolved(unfused, true, 1, preset_model("medium"), 16), true);
  // One GPU: the step kernel asked for either way (auto is the default).
  for (StepKernel kernel : {StepKernel::chain, StepKernel::persistent}) {
    StepRequest request;
    request.step_kernel = kernel;
    expect_reproduced(resolved(request, true, 1, preset_model("medium"), 16), true);
  }
}

// The autos stay autos where they decide what was recorded: the command asks only for what differs from them.
TEST(ReproducingCommand, AnAutoThatDecidesTheSameIsLeftOut) {
  const Configuration defaults = resolved(StepRequest{}, true, 4, preset_model("large"), 4096);
  ASSERT_TRUE(defaults.training.overlap);  // auto: 4 GPUs at a local batch of 1024
  EXPECT_EQ(reproducing_command(defaults, {"1,4", true}).arguments,
            " --model large --batch 4096 --gpus 1,4 --warmup 3 --steps 7 --runs 4 --seed 11");
  StepRequest off;
  off.overlap = Toggle::off;
  const Configuration without = resolved(off, true, 4, preset_model("large"), 4096);
  EXPECT_EQ(reproducing_command(without, {"1,4", true}).arguments,
            " --model large --batch 4096 --gpus 1,4 --overlap off --warmup 3 --steps 7 --runs 4 --seed 11");
  expect_reproduced(defaults, true);
  expect_reproduced(without, true);
}

// The CPU fallback: every option it honours off its default, the device said, the model's dropout where it is not
// the preset's.
TEST(ReproducingCommand, EverySettingTheCpuHonoursOffItsDefault) {
  StepRequest request;
  request.timing = TimingMode::step;
  request.accumulate_steps = 2;
  request.overlap_order = WeightGradientOrder::layerwise;  // no overlap: not recorded, not asked for
  MlpSpec medium = preset_model("medium");
  medium.dropout = 0;
  const Configuration c = resolved(request, false, 2, medium, 6);
  EXPECT_EQ(reproducing_command(c, {"1,2", false}).arguments,
            " --model medium --dropout 0 --batch 6 --gpus 1,2 --device cpu --accumulate 2 --timing step --warmup 3 "
            "--steps 7 --runs 4 --seed 11");
  expect_reproduced(c, false);
  expect_reproduced(resolved(StepRequest{}, false, 2, custom_model({9, 5, 2}, 0.0), 4), false);
}

// The baseline of an N-GPU configuration keeps what pairs (role scaled) and runs the rest as one GPU does by default:
// its command asks for no N-GPU-only setting, and what it measures pairs.
TEST(ReproducingCommand, TheOneGpuBaselineKeepsTheScaledSettingsOnly) {
  StepRequest request;
  request.graph = Toggle::off;
  request.timing = TimingMode::events;
  request.precision = Precision::tf32;
  request.overlap = Toggle::on;
  request.grad_dtype = GradDtype::bf16;
  request.nccl_max_ctas = 4;
  const Configuration two = resolved(request, true, 2, preset_model("large"), 64);
  const Configuration one = one_gpu_baseline(two, true);
  EXPECT_EQ(one.gpus, 1);
  EXPECT_EQ(recorded_texts(one, true, AttributeRole::scaled), recorded_texts(two, true, AttributeRole::scaled));
  EXPECT_FALSE(one.training.overlap);
  EXPECT_EQ(one.training.grad_dtype, GradDtype::fp32);
  EXPECT_EQ(one.training.nccl_max_ctas, 0);
  EXPECT_EQ(reproducing_command(one, {"1", true}).arguments,
            " --model large --batch 64 --gpus 1 --graph off --precision tf32 --timing events --warmup 3 --steps 7 "
            "--runs 4 --seed 11");
}

// A plan from another file and Adam's constants: no option gives them, and the command says which.
TEST(ReproducingCommand, WhatNoOptionGivesIsNamed) {
  Configuration c = resolved(StepRequest{}, true, 2, preset_model("large"), 32);
  adopt_gemm_plan(c.training, GemmPlan{{{"TN m=1 n=2 k=3", "cuBLAS"}}, "old.h5, configuration x"}, true);
  c.training.adam.beta1 = 0.8f;
  const ReproducingCommand command = reproducing_command(c, {"1,2", true});
  EXPECT_EQ(command.unreproduced, (std::vector<std::string>{"gemm_tuning", "adam_beta1"}));
  EXPECT_EQ(command.arguments, " --model large --batch 32 --gpus 1,2 --warmup 3 --steps 7 --runs 4 --seed 11");
  // Settings no request resolves to (a file's, written by other code): every step option is named.
  Configuration impossible = resolved(StepRequest{}, true, 1, preset_model("large"), 32);
  impossible.training.overlap = true;  // one GPU reduces nothing
  std::vector<std::string> unreproduced;
  reproducing_request(impossible, true, unreproduced);
  EXPECT_EQ(unreproduced.size(), 15u);
}

}  // namespace
}  // namespace mgpu
