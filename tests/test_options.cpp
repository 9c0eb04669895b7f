// Purpose: tests of command-line parsing and validation (one-line errors naming the bad value).
#include <gtest/gtest.h>

#include <vector>

#include "error.hpp"
#include "options.hpp"

namespace mgpu {
namespace {

BenchOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "mgpu_bench");
  return parse_options(static_cast<int>(args.size()), args.data());
}

std::string error_of(std::vector<const char*> args) {
  try {
    parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Options, DefaultsFollowTheStudy) {
  const BenchOptions options = parse({});
  EXPECT_EQ(options.model.name, "large");
  EXPECT_EQ(options.global_batch, 32);
  EXPECT_EQ(options.warmup_steps, 10);
  EXPECT_EQ(options.measured_steps, 100);
  EXPECT_EQ(options.runs, 50);
  EXPECT_EQ(options.device, DeviceChoice::automatic);
  EXPECT_TRUE(options.nccl_algo.empty());
  EXPECT_FALSE(options.force);
  EXPECT_EQ(options.default_output_path(2), "mgpu_bench_large_b32_n2.h5");
}

TEST(Options, ParsesEverything) {
  const BenchOptions options =
      parse({"--model", "medium", "--batch", "128", "--warmup", "0", "--steps", "7", "--runs", "3", "--seed",
             "18446744073709551615", "--device", "cpu", "--nccl-algo", "tree", "--nccl-proto", "SIMPLE", "--output",
             "x.h5", "--force", "--dropout", "0"});
  EXPECT_EQ(options.model.name, "medium");
  EXPECT_EQ(options.model.dropout, 0.0);
  EXPECT_EQ(options.global_batch, 128);
  EXPECT_EQ(options.warmup_steps, 0);
  EXPECT_EQ(options.measured_steps, 7);
  EXPECT_EQ(options.runs, 3);
  EXPECT_EQ(options.seed, 18446744073709551615ull);
  EXPECT_EQ(options.device, DeviceChoice::cpu);
  EXPECT_EQ(options.nccl_algo, "Tree");
  EXPECT_EQ(options.nccl_proto, "Simple");
  EXPECT_EQ(options.output_path, "x.h5");
  EXPECT_TRUE(options.force);
}

TEST(Options, CustomLayers) {
  const BenchOptions options = parse({"--layers", "50,256,3", "--dropout", "0.5"});
  EXPECT_EQ(options.model.name, "custom");
  EXPECT_EQ(options.model.widths, (std::vector<int>{50, 256, 3}));
  EXPECT_EQ(options.default_output_path(1), "mgpu_bench_50-256-3_b32_n1.h5");
}

TEST(Options, NcclListsKeepExclusionAndSpelling) {
  EXPECT_EQ(nccl_algo_env_value("ring,tree"), "Ring,Tree");
  EXPECT_EQ(nccl_algo_env_value("^nvls"), "^NVLS");
  EXPECT_EQ(nccl_proto_env_value("ll128"), "LL128");
}

TEST(Options, EachBadValueGivesOneLineNamingIt) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--batch", "0"}, "--batch 0"},
      {{"--batch", "abc"}, "abc"},
      {{"--steps", "-5"}, "--steps -5"},
      {{"--steps", "0"}, "--steps 0"},
      {{"--warmup", "-1"}, "--warmup -1"},
      {{"--runs", "0"}, "--runs 0"},
      {{"--model", "huge"}, "huge"},
      {{"--model", "large", "--layers", "4,2"}, "--layers"},
      {{"--device", "tpu"}, "tpu"},
      {{"--seed", "-1"}, "--seed '-1'"},
      {{"--nccl-algo", "fastest"}, "fastest"},
      {{"--nccl-proto", "ll,"}, "--nccl-proto"},
      {{"--dropout", "1"}, "--dropout"},
      {{"--bogus"}, "bogus"},
      {{"--model", "medium", "extra"}, "extra"},
      {{"--warmup", "2147483647"}, "--warmup 2147483647"},
      {{"--batch", "16777217"}, "--batch 16777217"},
      {{"--runs", "100001"}, "--runs 100001"},
      {{"--graph", "yes"}, "--graph 'yes'"},
      {{"--overlap", "1"}, "--overlap '1'"},
      {{"--bucket-mb", "0"}, "--bucket-mb 0"},
      {{"--bucket-mb", "-2"}, "--bucket-mb -2"},
      {{"--bucket-mb", "nan"}, "--bucket-mb"},
      {{"--precision", "fp16"}, "--precision 'fp16'"},
      {{"--precision", "bf16"}, "--precision bf16"},
      {{"--timing", "some"}, "--timing 'some'"},
  };
  for (const auto& [args, needle] : cases) {
    const std::string message = error_of(args);
    EXPECT_NE(message.find(needle), std::string::npos) << "args[0]=" << args[0] << " message: '" << message << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Options, StepExecutionDefaultsAndValues) {
  const BenchOptions defaults = parse({});
  EXPECT_EQ(defaults.step.graph, Toggle::automatic);
  EXPECT_EQ(defaults.step.overlap, Toggle::automatic);
  EXPECT_EQ(defaults.step.bucket_mb, 8.0);
  EXPECT_EQ(defaults.step.precision, Precision::fp32);
  EXPECT_EQ(defaults.step.timing, TimingMode::events);
  const BenchOptions set =
      parse({"--graph", "off", "--overlap", "on", "--bucket-mb", "0.5", "--precision", "tf32", "--timing", "none"});
  EXPECT_EQ(set.step.graph, Toggle::off);
  EXPECT_EQ(set.step.overlap, Toggle::on);
  EXPECT_EQ(set.step.bucket_mb, 0.5);
  EXPECT_EQ(set.step.precision, Precision::tf32);
  EXPECT_EQ(set.step.timing, TimingMode::none);
}

TEST(Options, StepExecutionResolvesPerBackend) {
  TrainingSettings cuda;
  apply_step_options(parse({}).step, true, cuda);
  EXPECT_TRUE(cuda.graph);
  EXPECT_FALSE(cuda.overlap);  // auto: off (measured no faster on 2 x H200)
  apply_step_options(parse({"--overlap", "on"}).step, true, cuda);
  EXPECT_TRUE(cuda.overlap);
  TrainingSettings cpu;
  cpu.graph = cpu.overlap = true;
  apply_step_options(parse({}).step, false, cpu);  // auto: off on the CPU, no error
  EXPECT_FALSE(cpu.graph);
  EXPECT_FALSE(cpu.overlap);
  apply_step_options(parse({"--graph", "off", "--overlap", "off"}).step, true, cuda);
  EXPECT_FALSE(cuda.graph);
  EXPECT_FALSE(cuda.overlap);
  const std::vector<std::pair<std::vector<const char*>, std::string>> refused_on_cpu = {
      {{"--graph", "on"}, "--graph on"},
      {{"--overlap", "on"}, "--overlap on"},
      {{"--precision", "tf32"}, "--precision tf32"},
      {{"--timing", "none"}, "--timing none"}};
  for (const auto& [args, needle] : refused_on_cpu) {
    TrainingSettings settings;
    try {
      apply_step_options(parse(args).step, false, settings);
      ADD_FAILURE() << args[0] << " accepted on the CPU";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NO_THROW(apply_step_options(parse(args).step, true, settings)) << args[0];
    }
  }
}

TEST(Options, BatchMustSplitEvenlyAcrossRanks) {
  const BenchOptions options = parse({"--batch", "33"});
  EXPECT_NO_THROW(validate_for_ranks(options, 1));
  EXPECT_NO_THROW(validate_for_ranks(options, 3));
  try {
    validate_for_ranks(options, 2);
    ADD_FAILURE() << "batch 33 accepted on 2 ranks";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch 33"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mgpu
