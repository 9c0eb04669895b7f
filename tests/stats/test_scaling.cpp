// Purpose: the scaling table's pairing (scaling.hpp, configuration_identity.hpp): an N-GPU configuration pairs with
// the 1-GPU one of the same model, widths, batch and settings whatever its NCCL settings, hosts or versions; a
// different batch, precision or step option (added in schema_version 2, defaulted when absent) does not pair; missing
// baselines and repeated baselines are reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <string>

#include "stats/pairing_identity.hpp"
#include "stats/scaling.hpp"

using namespace mgpu;
using namespace mgpu::stats;

namespace {

// Configurations made in memory: attribute_text is what the identity keys read.
struct Made {
  std::deque<ConfigurationResults> results;  // stable addresses
  std::vector<ConfigurationStats> stats;

  void add(const std::string& name, int ranks, std::map<std::string, std::string> changes = {},
           std::vector<double> throughput = {100, 101, 99, 100, 100}) {
    ConfigurationResults& c = results.emplace_back();
    c.metadata.name = name;
    c.metadata.configuration.training.model.name = "large";
    c.metadata.configuration.gpus = ranks;
    c.metadata.configuration.training.global_batch = 32;
    c.attribute_text = {{"model", "large"},
                        {"layer_widths", "4800,1024,3"},
                        {"dropout", "0.3"},
                        {"global_batch", "32"},
                        {"batch_mode", "global"},
                        {"device", "cuda"},
                        {"precision", "fp32"},
                        {"warmup_steps", "10"},
                        {"measured_steps", "100"},
                        {"seed", "1"},
                        {"adam_learning_rate", "0.001"},
                        {"adam_beta1", "0.9"},
                        {"adam_beta2", "0.999"},
                        {"adam_epsilon", "1e-07"},
                        {"ranks", std::to_string(ranks)},
                        {"nccl_algo", "default"},
                        {"nccl_proto", "default"},
                        {"hosts", "a"}};
    for (auto& [key, value] : changes) c.attribute_text[key] = value;
    ConfigurationStats s;
    s.file = name + ".h5";
    s.label = configuration_label(c);
    s.results = &c;
    s.kept_throughput = throughput;
    s.throughput = summarize_sample(throughput);
    stats.push_back(s);
  }
};

TEST(Scaling, PairsOnIdentityIgnoringNcclHostsAndVersions) {
  Made m;
  m.add("one", 1);
  m.add("two", 2, {{"hosts", "a,b"}, {"nccl_version", "2.28"}}, {200, 202, 198, 200, 200});
  m.add("two_tree", 2, {{"nccl_algo", "Tree"}, {"nccl_proto", "Simple"}});
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 2u);
  EXPECT_TRUE(table.without_baseline.empty());
  EXPECT_EQ(table.pairs[0].single().results->metadata.name, "one");
  EXPECT_EQ(table.pairs[0].multi().results->metadata.name, "two");
  EXPECT_DOUBLE_EQ(table.pairs[0].speedup.ratio, 2.0);
  EXPECT_DOUBLE_EQ(table.pairs[0].efficiency, 1.0);
  EXPECT_TRUE(table.pairs[0].welch.valid);
  EXPECT_GT(table.pairs[0].welch.t, 0);  // N-GPU minus 1-GPU
  EXPECT_EQ(table.pairs[1].multi().label, "two_tree nccl Tree/Simple");
}

TEST(Scaling, DifferentSettingsDoNotPair) {
  Made m;
  m.add("one", 1);
  m.add("batch64", 2, {{"global_batch", "64"}});
  m.add("bf16", 2, {{"precision", "bf16"}});
  m.add("graph", 2, {{"graph", "on"}});  // a schema-2 attribute that differs from its default
  m.add("other_seed", 2, {{"seed", "2"}});
  const ScalingTable table = build_scaling_table(m.stats);
  EXPECT_TRUE(table.pairs.empty());
  ASSERT_EQ(table.without_baseline.size(), 4u);
  EXPECT_EQ(table.without_baseline[2]->label, "graph graph=on");
}

TEST(Scaling, AbsentNewAttributesTakeTheirDefaults) {
  // A version-1 file (no graph, overlap, ... attributes) pairs with a version-2 file that states the defaults.
  Made m;
  m.add("v1_one", 1);
  m.add("v2_two", 2,
        {{"graph", "off"},
         {"overlap", "off"},
         {"bucket_mb", "25"},
         {"grad_dtype", "fp32"},
         {"accumulate_steps", "1"},
         {"timing", "events"},
         {"implementation", "mgpu_bench"},
         {"environment_preset", "none"},
         {"fused_optimizer", "off"}});
  EXPECT_EQ(build_scaling_table(m.stats).pairs.size(), 1u);
}

TEST(Scaling, AFusedOptimizerBaselinePairsAndIsLabelled) {
  // fused_optimizer (schema_version 4) runs on 1 GPU only: the 1-GPU step as it ran is the baseline of the 2-GPU one,
  // which records it off (or, from a version-3 file, lacks it).
  Made m;
  m.add("one_fused", 1, {{"fused_optimizer", "on"}});
  m.add("two", 2, {{"fused_optimizer", "off"}}, {200, 202, 198, 200, 200});
  m.add("two_v3", 2, {}, {200, 202, 198, 200, 200});
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 1u);
  EXPECT_TRUE(table.without_baseline.empty());
  EXPECT_EQ(table.pairs[0].single().label, "one_fused fused_optimizer=on");
  // The version-3 file's 2-GPU configuration is the same configuration as "two": its second trial, which has no
  // second 1-GPU trial to pair with.
  ASSERT_EQ(table.unmatched_trials.size(), 1u);
  EXPECT_EQ(table.unmatched_trials[0]->label, "two_v3");
}

// Two 1-GPU configurations of one scaling identity with other compared settings (NCCL's, which one rank never uses):
// the first is the baseline.
TEST(Scaling, FirstOfRepeatedBaselinesIsUsedAndTheOthersListed) {
  Made m;
  m.add("one_a", 1);
  m.add("one_b", 1, {{"nccl_algo", "Tree"}}, {50, 51, 49, 50, 50});
  m.add("two", 2);
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 1u);
  EXPECT_EQ(table.pairs[0].single().results->metadata.name, "one_a");
  ASSERT_EQ(table.duplicate_baselines.size(), 1u);
  EXPECT_EQ(table.duplicate_baselines[0]->results->metadata.name, "one_b");
}

// Configurations "one" (1 GPU), `two` (2 GPUs) and "four" (4 GPUs) of one model and batch.
Made one_two_four(const std::string& two) {
  Made m;
  m.add("one", 1);
  m.add(two, 2);
  m.add("four", 4);
  return m;
}

// A configuration whose replicas differed after its runs computed another update: never a baseline, never paired,
// and listed. One not checked (a file before version 9) still pairs.
TEST(Scaling, ConfigurationsWhoseReplicasDifferedAreNotPaired) {
  Made m = one_two_four("two_differ");
  m.results[1].progress.replica_check = "rank 1's parameters differ from rank 0's (FNV-1a 64 0x1 against 0x2)";
  m.results[2].progress.replica_check = "";
  ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 1u);
  EXPECT_EQ(table.pairs[0].multi().results->metadata.name, "four");
  ASSERT_EQ(table.wrong_steps.size(), 1u);
  EXPECT_EQ(table.wrong_steps[0]->results->metadata.name, "two_differ");

  m.results[0].progress.replica_check = "rank 1's parameters differ from rank 0's (...)";  // the baseline too
  m.results[1].progress.replica_check = "identical on 2 ranks (FNV-1a 64 of 5 parameters: 0x1)";
  table = build_scaling_table(m.stats);
  EXPECT_TRUE(table.pairs.empty());
  EXPECT_EQ(table.without_baseline.size(), 2u);
  ASSERT_EQ(table.wrong_steps.size(), 1u);
  EXPECT_EQ(table.wrong_steps[0]->results->metadata.name, "one");
}

// A configuration whose math check failed trained another update before any run: never a baseline, never paired, and
// listed with the check's text. One that passed, or was not checked (a file before version 10), pairs.
TEST(Scaling, ConfigurationsWhoseMathCheckFailedAreNotPaired) {
  Made m = one_two_four("two_failed");
  m.results[0].metadata.math_check =
      "passed: relative error 0.001 on rank 0, the largest of 1 (tolerance 0.05, 3 steps)";
  m.results[1].metadata.math_check = "FAILED: relative error 0.3 on rank 1, the largest of 2 (tolerance 0.05, 3 steps)";
  ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 1u);
  EXPECT_EQ(table.pairs[0].multi().results->metadata.name, "four");
  ASSERT_EQ(table.wrong_steps.size(), 1u);
  EXPECT_EQ(table.wrong_steps[0]->wrong_step(), "its math check failed (" + m.results[1].metadata.math_check + ")");
}

// Two jobs' files of the same command: their pairs are trials 1 and 2, paired in the order given; a third 2-GPU
// configuration without a third baseline is left out, and a pair measured once is judged over its runs.
TEST(Scaling, RepeatedPairsAreTrials) {
  Made m;
  m.add("one_a", 1, {}, {100, 102, 98, 100, 100});
  m.add("two_a", 2, {}, {150, 151, 149, 150, 150});
  m.add("one_b", 1, {}, {110, 111, 109, 110, 110});
  m.add("two_b", 2, {}, {160, 162, 158, 160, 160});
  m.add("two_c", 2, {}, {170, 170, 170, 170, 170});
  m.add("once_one", 1, {{"global_batch", "64"}});
  m.add("once_two", 2, {{"global_batch", "64"}});
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 2u);
  const ScalingPair& pair = table.pairs[0];
  ASSERT_EQ(pair.trials(), 2u);
  EXPECT_TRUE(pair.in_trials());
  EXPECT_EQ(pair.singles[0]->results->metadata.name, "one_a");
  EXPECT_EQ(pair.singles[1]->results->metadata.name, "one_b");
  EXPECT_EQ(pair.multis[1]->results->metadata.name, "two_b");
  ASSERT_EQ(table.unmatched_trials.size(), 1u);
  EXPECT_EQ(table.unmatched_trials[0]->results->metadata.name, "two_c");
  EXPECT_DOUBLE_EQ(pair.speedup.ratio, 155.0 / 105.0);
  EXPECT_DOUBLE_EQ(pair.speedup.df, 1.0);
  EXPECT_DOUBLE_EQ(pair.efficiency, 155.0 / 105.0 / 2);
  EXPECT_FALSE(pair.welch.valid);  // the trial interval decides, not a test of runs
  EXPECT_DOUBLE_EQ(pair.single_components.grand_mean, 105.0);
  // Within: squares 8 and 2 about the trial means, over 10 - 2 df; between: var(100, 110) = 50 less 1.25 / 5.
  EXPECT_DOUBLE_EQ(pair.single_components.within_trial, 1.25);
  EXPECT_DOUBLE_EQ(pair.single_components.between_trials, 49.75);
  // Each side's throughput is the mean of its trial means with t(0.975, 1) s / sqrt(2): s = sqrt(50) for 100, 110.
  EXPECT_DOUBLE_EQ(pair.single_throughput.mean, 105.0);
  ASSERT_TRUE(pair.single_throughput.has_interval);
  EXPECT_NEAR(pair.single_throughput.half_width, 12.706204736 * 5.0, 1e-6);
  // Each trial on its own, over its runs: trial 2 is 160 / 110.
  ASSERT_EQ(pair.trial_speedups.size(), 2u);
  EXPECT_DOUBLE_EQ(pair.trial_speedups[1].ratio, 160.0 / 110.0);
  EXPECT_TRUE(pair.trial_welch[1].valid);
  // The trial-level interval is wide where the trials differ (two trials, 1 df); the run-level one cannot see it.
  ASSERT_TRUE(pair.speedup.has_interval);
  EXPECT_LT(pair.speedup.low, 155.0 / 105.0);
  EXPECT_GT(pair.speedup.high, 155.0 / 105.0);
  EXPECT_LT(pair.speedup.low, pair.trial_speedups[0].low);
  const ScalingPair& once = table.pairs[1];
  EXPECT_EQ(once.trials(), 1u);
  EXPECT_FALSE(once.in_trials());
  EXPECT_TRUE(once.welch.valid);
  EXPECT_DOUBLE_EQ(once.single_throughput.mean, once.single().throughput.mean);
}

// Extra 1-GPU trials beyond every N-GPU count are listed; the N-GPU side of three trials pairs with three.
TEST(Scaling, ExtraBaselineTrialsAreListed) {
  Made m;
  for (int trial = 1; trial <= 3; ++trial) m.add("one_t" + std::to_string(trial), 1);
  m.add("two_t1", 2);
  m.add("two_t2", 2);
  for (int trial = 1; trial <= 3; ++trial) m.add("four_t" + std::to_string(trial), 4);
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 2u);
  EXPECT_EQ(table.pairs[0].trials(), 2u);
  EXPECT_EQ(table.pairs[1].trials(), 3u);
  EXPECT_TRUE(table.unmatched_trials.empty());
  Made fewer;
  for (int trial = 1; trial <= 3; ++trial) fewer.add("one_t" + std::to_string(trial), 1);
  fewer.add("two_t1", 2);
  fewer.add("two_t2", 2);
  const ScalingTable two = build_scaling_table(fewer.stats);
  ASSERT_EQ(two.unmatched_trials.size(), 1u);
  EXPECT_EQ(two.unmatched_trials[0]->results->metadata.name, "one_t3");
}

// Several files: an N-GPU configuration pairs with the 1-GPU baseline of its own file where that file has one (the
// same process, its neighbour in time), not with the first file's: `report 2gpu.h5 4gpu.h5` pairs 2 GPUs with
// 2gpu.h5's baseline and 4 GPUs with 4gpu.h5's, and leaves no trial unpaired. A file without a baseline pairs with
// the baseline of a file given beside it that has no N-GPU configuration of that identity.
TEST(Scaling, EachNGpuConfigurationPairsWithTheBaselineOfItsOwnFile) {
  Made m;
  m.add("one", 1, {}, {100, 101, 99, 100, 100});
  m.stats.back().file = "2gpu.h5";
  m.add("two", 2, {}, {150, 151, 149, 150, 150});
  m.stats.back().file = "2gpu.h5";
  m.add("one", 1, {}, {200, 201, 199, 200, 200});
  m.stats.back().file = "4gpu.h5";
  m.add("four", 4, {}, {600, 601, 599, 600, 600});
  m.stats.back().file = "4gpu.h5";
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 2u);
  EXPECT_EQ(table.pairs[0].single().file, "2gpu.h5");
  EXPECT_EQ(table.pairs[1].gpus(), 4);
  EXPECT_EQ(table.pairs[1].single().file, "4gpu.h5");
  EXPECT_DOUBLE_EQ(table.pairs[1].speedup.ratio, 3.0);
  EXPECT_TRUE(table.unmatched_trials.empty());

  // Two jobs of one command (each with its baseline) and a 2-GPU file whose baseline is a file of its own: trials pair
  // job by job, the lone 2-GPU file with the lone baseline, whatever the order they are given in.
  Made jobs;
  const auto add = [&jobs](const std::string& name, int ranks, const std::string& file, double throughput) {
    jobs.add(name, ranks, {}, {throughput, throughput + 1, throughput - 1, throughput, throughput});
    jobs.stats.back().file = file;
  };
  add("one", 1, "baseline.h5", 90);
  add("two", 2, "job1.h5", 150);
  add("one", 1, "job1.h5", 100);
  add("two", 2, "alone.h5", 170);
  add("one", 1, "job2.h5", 110);
  add("two", 2, "job2.h5", 160);
  const ScalingTable trials = build_scaling_table(jobs.stats);
  ASSERT_EQ(trials.pairs.size(), 1u);
  const ScalingPair& pair = trials.pairs[0];
  ASSERT_EQ(pair.trials(), 3u);
  EXPECT_EQ(pair.singles[0]->file, "job1.h5");
  EXPECT_EQ(pair.singles[1]->file, "baseline.h5");
  EXPECT_EQ(pair.multis[1]->file, "alone.h5");
  EXPECT_EQ(pair.singles[2]->file, "job2.h5");
  EXPECT_TRUE(trials.unmatched_trials.empty());

  // A file whose own baselines are used up leaves its extra N-GPU trial unpaired rather than borrowing another's.
  Made extra;
  extra.add("one", 1);
  extra.stats.back().file = "a.h5";
  extra.add("two", 2);
  extra.stats.back().file = "a.h5";
  extra.add("two", 2);
  extra.stats.back().file = "a.h5";
  extra.add("one", 1);
  extra.stats.back().file = "b.h5";
  extra.add("two", 2);
  extra.stats.back().file = "b.h5";
  const ScalingTable unpaired = build_scaling_table(extra.stats);
  ASSERT_EQ(unpaired.pairs.at(0).trials(), 2u);
  ASSERT_EQ(unpaired.unmatched_trials.size(), 1u);
  EXPECT_EQ(unpaired.unmatched_trials[0], &extra.stats[2]);
}

TEST(Scaling, TrialMeansGiveAnIntervalFromTwo) {
  EXPECT_FALSE(summarize_trial_means({100}).has_interval);
  const SampleSummary two = summarize_trial_means({100, 110});
  ASSERT_TRUE(two.has_interval);
  EXPECT_DOUBLE_EQ(two.mean, 105.0);
  EXPECT_NEAR(two.half_width, 12.706204736 * 5.0, 1e-6);
}

// A configuration at global batch `batch` whose runs' throughputs spread ±1 around `throughput`.
void at_batch(Made& m, const std::string& name, int ranks, long long batch, double throughput) {
  m.add(name, ranks, {{"global_batch", std::to_string(batch)}},
        {throughput, throughput + 1, throughput - 1, throughput, throughput});
  m.results.back().metadata.configuration.training.global_batch = batch;
}

// The ceiling: with the 1-GPU configuration at the local batch 16 (100 samples/s) beside the one at 32 (160), two
// GPUs at 32 could at most reach 2 x 100 / 160 = 1.25; at 150 samples/s (speedup 0.9375) they reach 0.75 of it.
// Without the local batch, or where the global batch does not divide, there is no ceiling.
TEST(Scaling, TheCeilingComesFromTheOneGpuConfigurationAtTheLocalBatch) {
  Made m;
  at_batch(m, "one_b16", 1, 16, 100);
  at_batch(m, "one_b32", 1, 32, 160);
  at_batch(m, "two_b32", 2, 32, 150);
  at_batch(m, "two_b16", 2, 16, 90);  // local batch 8: not measured
  const ScalingTable table = build_scaling_table(m.stats);
  ASSERT_EQ(table.pairs.size(), 2u);
  const ScalingPair& pair = table.pairs[0];
  ASSERT_TRUE(pair.has_ceiling());
  EXPECT_EQ(pair.locals.front()->results->metadata.name, "one_b16");
  EXPECT_DOUBLE_EQ(pair.speedup.ratio, 150.0 / 160.0);
  EXPECT_DOUBLE_EQ(pair.ceiling.ratio, 1.25);
  EXPECT_DOUBLE_EQ(pair.ceiling_fraction.ratio, 0.75);
  ASSERT_TRUE(pair.ceiling.has_interval);
  EXPECT_LT(pair.ceiling.low, 1.25);
  EXPECT_GT(pair.ceiling.high, 1.25);
  EXPECT_LT(pair.ceiling_fraction.low, 0.75);
  EXPECT_GT(pair.ceiling_fraction.high, 0.75);
  EXPECT_FALSE(table.pairs[1].has_ceiling());
  Made odd;
  at_batch(odd, "one_b10", 1, 10, 100);
  at_batch(odd, "one_b21", 1, 21, 100);
  at_batch(odd, "two_b21", 2, 21, 100);  // 21 / 2 is no batch
  EXPECT_FALSE(build_scaling_table(odd.stats).pairs[0].has_ceiling());
}

// In trials the ceiling pairs trial k of the local batch with trial k of each side, over the trial means; a pair in
// trials with one local-batch trial gets no ceiling (one trial cannot give the interval the pair's level needs).
TEST(Scaling, TheCeilingInTrialsIsOverTheTrialMeans) {
  Made m;
  at_batch(m, "one_b16_t1", 1, 16, 100);
  at_batch(m, "one_b32_t1", 1, 32, 160);
  at_batch(m, "two_b32_t1", 2, 32, 150);
  at_batch(m, "one_b16_t2", 1, 16, 110);
  at_batch(m, "one_b32_t2", 1, 32, 170);
  at_batch(m, "two_b32_t2", 2, 32, 140);
  const ScalingTable table = build_scaling_table(m.stats);
  const ScalingPair& pair = table.pairs.back();
  ASSERT_TRUE(pair.in_trials());
  ASSERT_TRUE(pair.has_ceiling());
  EXPECT_EQ(pair.locals.size(), 2u);
  EXPECT_DOUBLE_EQ(pair.ceiling.ratio, 2 * 105.0 / 165.0);
  EXPECT_DOUBLE_EQ(pair.ceiling_fraction.ratio, 145.0 / (2 * 105.0));
  Made once;
  at_batch(once, "one_b16", 1, 16, 100);
  at_batch(once, "one_b32_t1", 1, 32, 160);
  at_batch(once, "two_b32_t1", 2, 32, 150);
  at_batch(once, "one_b32_t2", 1, 32, 170);
  at_batch(once, "two_b32_t2", 2, 32, 140);
  const ScalingTable single_local = build_scaling_table(once.stats);
  ASSERT_TRUE(single_local.pairs.back().in_trials());
  EXPECT_FALSE(single_local.pairs.back().has_ceiling());
}

TEST(Scaling, IdentityListsAreTheDocumentedOnes) {
  std::vector<std::string> names;
  for (const IdentityAttribute& a : scaling_identity_attributes()) names.push_back(a.name);
  for (const char* excluded :
       {"ranks", "nccl_algo", "nccl_proto", "environment_preset", "hosts", "nccl_version", "fused_optimizer"})
    EXPECT_EQ(std::count(names.begin(), names.end(), excluded), 0) << excluded;
  std::vector<std::string> compared;
  for (const IdentityAttribute& a : comparison_identity_attributes()) compared.push_back(a.name);
  for (const char* included :
       {"ranks", "nccl_algo", "nccl_proto", "environment_preset", "global_batch", "graph", "fused_optimizer"})
    EXPECT_EQ(std::count(compared.begin(), compared.end(), included), 1) << included;
}

}  // namespace
