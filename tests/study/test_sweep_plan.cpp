// Purpose: tests of the sweep plan: each configuration's settings, in particular what depends on its GPU count
// (overlap and grad_dtype only with > 1 GPU, --fuse-optimizer resolved with 1 GPU, fp32 and the local batch).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "config/resolver.hpp"
#include "platform/error.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {
namespace {

BenchOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mgpu_bench");
  return parse_options(static_cast<int>(args.size()), args.data());
}

// The settings of the last configuration `args` plan on `job_ranks` ranks (one batch: without --gpus, the one on
// all ranks, after the 1-GPU baseline), on the CUDA back-end or the CPU fallback.
TrainingSettings settings_of(std::vector<const char*> args, int job_ranks, bool cuda_backend = true) {
  const std::vector<Configuration> plan = plan_sweep(parse(args), job_ranks, cuda_backend);
  EXPECT_FALSE(plan.empty());
  return plan.back().training;
}

// --trials T: each batch's GPU counts trial by trial, so that a trial's 1-GPU and N-GPU configurations are neighbours
// in time; the names carry the trial only when there are several.
TEST(SweepPlan, TrialsAlternateTheGpuCountsOfEachBatch) {
  const std::vector<Configuration> plan = plan_sweep(parse({"--batch", "32,64", "--trials", "2"}), 2, true);
  std::vector<std::string> names;
  for (const Configuration& configuration : plan) names.push_back(configuration.name("cpu"));
  EXPECT_EQ(names, (std::vector<std::string>{"large_b32_n1_cpu_t1", "large_b32_n2_cpu_t1", "large_b32_n1_cpu_t2",
                                             "large_b32_n2_cpu_t2", "large_b64_n1_cpu_t1", "large_b64_n2_cpu_t1",
                                             "large_b64_n1_cpu_t2", "large_b64_n2_cpu_t2"}));
  EXPECT_EQ(plan[2].trial, 2);
  EXPECT_EQ(plan[2].trials, 2);
  EXPECT_EQ(parse({"--batch", "32,64", "--trials", "2"}).configuration_count(2), 4u);  // of one trial
  EXPECT_EQ(plan_sweep(parse({"--batch", "32"}), 2, true).front().name("cpu"), "large_b32_n1_cpu");
}

// --trials left out: auto on GPUs where a batch pairs 1 GPU with more (each process tunes its own GEMM plan); one
// trial on the CPU fallback and where nothing pairs; a --resume continues the file's trials (0: no file yet, a new
// job); a given --trials is kept everywhere.
TEST(SweepPlan, TrialsLeftOutAreAutoOnGpusWhereABatchPairsGpuCounts) {
  struct Case {
    std::vector<const char*> args;
    bool on_gpus;
    int ranks;
    int resumed_trials;
    int trials;
    bool adaptive;
  };
  const std::vector<Case> cases = {
      {{}, true, 2, 1, kMaxAutoTrials, true},
      {{}, true, 4, 1, kMaxAutoTrials, true},
      {{}, true, 1, 1, 1, false},
      {{"--gpus", "2"}, true, 2, 1, 1, false},
      {{"--gpus", "1,2"}, true, 2, 1, kMaxAutoTrials, true},
      {{}, false, 2, 1, 1, false},
      {{"--trials", "1"}, true, 2, 1, 1, false},
      {{"--trials", "3"}, false, 2, 1, 3, false},
      {{"--resume"}, true, 2, 5, 5, false},
      {{"--resume"}, false, 2, 2, 2, false},
      {{"--resume"}, true, 2, 0, kMaxAutoTrials, true},
      {{"--resume"}, false, 2, 0, 1, false},
      {{"--resume", "--trials", "3"}, true, 2, 5, 3, false},
  };
  for (const Case& c : cases) {
    const BenchOptions options = with_default_trials(parse(c.args), c.on_gpus, c.ranks, c.resumed_trials);
    const std::string what = std::to_string(c.args.size()) + " arguments, " + (c.on_gpus ? "GPUs" : "CPU") + ", " +
                             std::to_string(c.ranks) + " ranks, file's trials " + std::to_string(c.resumed_trials);
    EXPECT_EQ(options.trials, c.trials) << what;
    EXPECT_EQ(options.adaptive_trials, c.adaptive) << what;
  }
}

TEST(SweepPlan, FuseOptimizerAutoIsOnForOneGpuFp32UpToTheBatchAndTheWeightGradientWork) {
  EXPECT_EQ(kFusedOptimizerMostWeightSamples, 2'000'000'000);
  EXPECT_TRUE(settings_of({"--batch", "32"}, 1).fused_optimizer);  // the default is auto
  EXPECT_TRUE(settings_of({"--batch", "32", "--fuse-optimizer", "auto"}, 1).fused_optimizer);
  // large (the default model): 6,882,048 dense weights x 290 samples is the last local batch within the work limit.
  EXPECT_TRUE(settings_of({"--batch", "290"}, 1).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "291"}, 1).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "512", "--fuse-optimizer", "auto"}, 1).fused_optimizer);
  EXPECT_TRUE(settings_of({"--model", "medium", "--batch", "1024"}, 1).fused_optimizer);  // the batch bound
  EXPECT_FALSE(settings_of({"--model", "medium", "--batch", "1025"}, 1).fused_optimizer);
  // auto never takes it where it cannot apply: another precision, the CPU fallback.
  EXPECT_FALSE(settings_of({"--batch", "32", "--precision", "tf32"}, 1).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "32", "--precision", "bf16"}, 1).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "32"}, 1, false).fused_optimizer);
}

TEST(SweepPlan, FuseOptimizerOnAndOffOverrideTheWorkLimitOnOneGpu) {
  EXPECT_TRUE(settings_of({"--batch", "1024", "--fuse-optimizer", "on"}, 1).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "32", "--fuse-optimizer", "off"}, 1).fused_optimizer);
}

TEST(SweepPlan, FuseOptimizerIsOffWithMoreThanOneGpu) {
  // The gradient is all-reduced between weight gradient and Adam: recorded as off, also when asked for.
  EXPECT_FALSE(settings_of({"--batch", "32", "--fuse-optimizer", "on"}, 2).fused_optimizer);
  EXPECT_FALSE(settings_of({"--batch", "32"}, 2).fused_optimizer);  // local batch 16, auto
  EXPECT_FALSE(settings_of({"--batch", "64", "--fuse-optimizer", "on", "--gpus", "2"}, 4).fused_optimizer);
}

TEST(SweepPlan, FuseOptimizerAutoUsesTheLocalBatchOfEachConfiguration) {
  // One sweep, 1 and 2 GPUs per batch: only the 1-GPU configurations within the work limit fuse.
  const std::vector<Configuration> plan = plan_sweep(parse({"--batch", "32,512", "--gpus", "1,2"}), 2, true);
  ASSERT_EQ(plan.size(), 4u);
  std::vector<std::string> fused;
  for (const Configuration& configuration : plan)
    if (configuration.training.fused_optimizer) fused.push_back(configuration.name("cuda"));
  EXPECT_EQ(fused, std::vector<std::string>{"large_b32_n1_cuda"});
}

TEST(SweepPlan, FuseOptimizerOnIsRefusedOnTheCpu) {
  EXPECT_THROW(plan_sweep(parse({"--fuse-optimizer", "on"}), 1, false), UsageError);
  EXPECT_NO_THROW(plan_sweep(parse({"--fuse-optimizer", "on"}), 1, true));
}

TEST(SweepPlan, ReductionSettingsApplyOnlyWithMoreThanOneGpu) {
  const std::vector<const char*> args = {"--overlap", "on", "--grad-dtype", "bf16"};
  const TrainingSettings one = settings_of(args, 1);
  EXPECT_FALSE(one.overlap);
  EXPECT_EQ(one.grad_dtype, GradDtype::fp32);
  const TrainingSettings two = settings_of(args, 2);
  EXPECT_TRUE(two.overlap);
  EXPECT_EQ(two.grad_dtype, GradDtype::bf16);
  // The sharded optimizer likewise: one GPU holds every shard, so its baseline is recorded unsharded.
  const std::vector<Configuration> sharded =
      plan_sweep(parse({"--overlap", "off", "--optimizer-sharding", "on"}), 2, true);
  ASSERT_EQ(sharded.size(), 2u);
  EXPECT_FALSE(sharded.front().training.optimizer_sharding);
  EXPECT_TRUE(sharded.back().training.optimizer_sharding);
}

TEST(SweepPlan, OverlapAutoTakesItFromFourGpusAtALocalBatchOf1024) {
  const std::vector<Configuration> plan = plan_sweep(parse({"--batch", "4096"}), 4, true);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_FALSE(plan.front().training.overlap);  // the 1-GPU baseline: nothing to reduce
  const TrainingSettings& four = plan.back().training;
  EXPECT_TRUE(four.overlap);
  EXPECT_EQ(four.overlap_order, WeightGradientOrder::deferred);
  EXPECT_FALSE(settings_of({"--batch", "4092"}, 4).overlap);  // local batch 1023
  EXPECT_FALSE(settings_of({"--batch", "3072"}, 3).overlap);  // 3 GPUs
  EXPECT_FALSE(settings_of({"--batch", "2048"}, 2).overlap);
  EXPECT_FALSE(settings_of({"--batch", "4096"}, 4, false).overlap);  // the CPU fallback: auto is off, not refused
}

TEST(SweepPlan, OverlapAutoStaysOffWhereItWasNotMeasuredOrCannotRun) {
  EXPECT_FALSE(settings_of({"--batch", "4096", "--overlap", "off"}, 4).overlap);
  EXPECT_FALSE(settings_of({"--batch", "4096", "--overlap-order", "layerwise"}, 4).overlap);
  const TrainingSettings sharded = settings_of({"--batch", "4096", "--optimizer-sharding", "on"}, 4);
  EXPECT_FALSE(sharded.overlap);
  EXPECT_TRUE(sharded.optimizer_sharding);
  EXPECT_TRUE(settings_of({"--batch", "4096", "--overlap-order", "layerwise", "--overlap", "on"}, 4).overlap);
}

}  // namespace
// Without --gpus a job of N > 1 ranks measures the 1-GPU baseline too; --timing interleaved (the default) adds its
// phase-marked runs to the --runs unmarked ones, every fifth run or the last of fewer than five.
TEST(SweepPlan, DefaultPlanHasTheBaselineAndInterleavedRuns) {
  const std::vector<Configuration> plan = plan_sweep(parse({"--runs", "10"}), 2, true);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].gpus, 1);
  EXPECT_EQ(plan[1].gpus, 2);
  for (const Configuration& c : plan) {
    EXPECT_EQ(c.runs(), 12);
    EXPECT_EQ(c.runs_requested, 10);  // recorded as the user typed it, so --resume compares like with like
    const TrainingSettings& settings = c.training;
    EXPECT_EQ(settings.timing, TimingMode::interleaved);
    EXPECT_EQ(settings.runs, 12);
  }
  EXPECT_EQ(plan_sweep(parse({"--runs", "10", "--timing", "events"}), 2, true)[0].runs(), 10);
  EXPECT_EQ(plan_sweep(parse({"--runs", "10", "--timing", "events"}), 2, true)[0].runs_requested, 10);
  EXPECT_EQ(plan_sweep(parse({"--gpus", "2"}), 2, true).size(), 1u);

  for (int unmarked = 1; unmarked <= 60; ++unmarked) {
    const int total = interleaved_run_count(unmarked);
    int marked = 0;
    for (int run = 0; run < total; ++run) marked += interleaved_run_marks_phases(run, total) ? 1 : 0;
    EXPECT_EQ(total - marked, unmarked) << unmarked;
    EXPECT_EQ(marked, unmarked < 4 ? 1 : unmarked / 4) << unmarked;
  }
  // Boundaries: 1 -> runs 0 (unmarked), 1 (marked); 4 -> run 4 marked; 5 -> runs 0-3, 5 unmarked, 4 marked.
  EXPECT_FALSE(interleaved_run_marks_phases(0, 2));
  EXPECT_TRUE(interleaved_run_marks_phases(1, 2));
  EXPECT_EQ(interleaved_run_count(4), 5);
  EXPECT_TRUE(interleaved_run_marks_phases(4, 5));
  EXPECT_FALSE(interleaved_run_marks_phases(3, 5));
  EXPECT_EQ(interleaved_run_count(5), 6);
  EXPECT_FALSE(interleaved_run_marks_phases(5, 6));
}

}  // namespace mgpu
