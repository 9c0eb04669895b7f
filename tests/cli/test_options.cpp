// Purpose: tests of command-line parsing and validation (one-line errors naming the bad value).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "cli/options.hpp"
#include "config/settings_table.hpp"
#include "platform/error.hpp"

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

// Options are matched exactly: a prefix is refused, not guessed ("--run 2" is not "--runs 2"); -h is --help; the
// help shows what the defaults are (auto trials, the GPU counts in the file name).
TEST(Options, OptionsAreExactAndHelpSaysTheDefaults) {
  EXPECT_NE(error_of({"--run", "2"}).find("'--run' (did you mean --runs?)"), std::string::npos)
      << error_of({"--run", "2"});
  EXPECT_NE(error_of({"--mod", "large"}).find("'--mod'"), std::string::npos);
  EXPECT_EQ(parse({"--runs", "2"}).settings.runs_requested, 2);
  EXPECT_TRUE(parse({"-h"}).show_help);
  EXPECT_NE(help_text().find("--trials arg (=auto)"), std::string::npos) << help_text();
  EXPECT_NE(help_text().find("mgpu_bench_large_b32_n1-2.h5"), std::string::npos);
}

// --help and --version answer whatever else the command line holds: a value that would be refused is not read.
TEST(Options, HelpOrVersionAloneAnswersBeforeAnyValueIsRead) {
  EXPECT_TRUE(parse({"--help", "--batch", "0"}).show_help);
  EXPECT_TRUE(parse({"--version", "--batch", "0"}).show_version);
}

// The step options come from the settings table: each in --help with its default and the names it takes, and each
// name parses back to its value (the command line's half of parse and print).
TEST(Options, EveryStepOptionTakesEveryNameItsTypeOffers) {
  const std::string help = help_text();
  const StepRequest defaults;
  for_each_step_option([&](const auto& row) {
    const std::string option = std::string("--") + row.option;
    EXPECT_NE(help.find(option + " arg (=" + request_text(row, defaults) + ")"), std::string::npos) << option;
    using Request = std::decay_t<decltype(defaults.*row.request)>;
    if constexpr (kNamedSetting<Request>) {
      for (const NamedValue<Request>& value : named_values(Request{})) {
        if (!value.on_command_line) {
          EXPECT_NE(error_of({option.c_str(), value.name}).find("choose"), std::string::npos) << value.name;
          continue;
        }
        EXPECT_NE(help.find(value.name), std::string::npos) << option << " " << value.name;
        EXPECT_TRUE(parse({option.c_str(), value.name}).step.*row.request == value.value)
            << option << " " << value.name;
      }
    }
  });
  EXPECT_EQ(error_of({"--overlap-update", "early"}), "--overlap-update 'early': choose per-bucket or after-last");
  EXPECT_EQ(error_of({"--gemm-tuning", "plan"}), "--gemm-tuning 'plan': choose step or alone");
}

TEST(Options, DefaultsFollowTheStudy) {
  const BenchOptions options = parse({});
  ASSERT_EQ(options.sweep.size(), 1u);
  EXPECT_EQ(options.sweep.front().model.name, "large");
  EXPECT_EQ(options.sweep.front().global_batches, std::vector<int>{32});
  EXPECT_TRUE(options.gpus.empty());
  EXPECT_FALSE(options.resume);
  EXPECT_EQ(options.configuration_count(1), 1u);
  EXPECT_EQ(options.settings.training.warmup_steps, 10);
  EXPECT_EQ(options.settings.training.measured_steps, 100);
  EXPECT_EQ(options.settings.runs_requested, 50);
  EXPECT_EQ(options.trials, 1);
  EXPECT_FALSE(options.adaptive_trials);
  EXPECT_FALSE(options.trials_given);  // the driver decides (study/sweep_plan.hpp, with_default_trials)
  EXPECT_TRUE(parse({"--trials", "1"}).trials_given);
  EXPECT_EQ(options.device, DeviceChoice::automatic);
  EXPECT_EQ(options.settings.nccl_algo, kNcclDefault);  // NCCL chooses, unless the environment says
  EXPECT_FALSE(options.force);
  EXPECT_LT(options.timeout_seconds, 0);  // derived from the configuration's runs (watchdog.hpp)
  EXPECT_EQ(parse({"--timeout", "0"}).timeout_seconds, 0);
  EXPECT_EQ(parse({"--timeout", "2.5"}).timeout_seconds, 2.5);
  EXPECT_EQ(options.default_output_path(1), "mgpu_bench_large_b32_n1.h5");
}

// --timeout read before MPI starts, for the start-up deadline: both spellings, the last word without a value and a bad
// value read as "not given" (the full parse then names it).
TEST(Options, TimeoutBeforeMpi) {
  const auto read = [](std::vector<const char*> words) {
    words.insert(words.begin(), "mgpu_bench");
    return timeout_before_mpi(static_cast<int>(words.size()), words.data());
  };
  EXPECT_EQ(read({}), -1);
  EXPECT_EQ(read({"--model", "large", "--timeout", "7.5"}), 7.5);
  EXPECT_EQ(read({"--timeout=0"}), 0);
  EXPECT_EQ(read({"--timeout"}), -1);
  EXPECT_EQ(read({"--timeout", "-3"}), -1);
  EXPECT_EQ(read({"--timeout", "soon"}), -1);
  EXPECT_EQ(read({"--timeouts", "4"}), -1);
}

// By default a configuration stops once its interval is narrow enough for a 1% speedup interval or after 60 s of runs;
// a --runs given asks for that many, so the noise rule then needs --max-noise too; 0 turns either rule off, and the
// bounds themselves are accepted.
TEST(Options, StoppingRulesAndRuns) {
  const BenchOptions defaults = parse({});
  EXPECT_EQ(defaults.max_noise_percent, 1.0);
  EXPECT_EQ(defaults.max_time_seconds, 60.0);
  const BenchOptions runs = parse({"--runs", "20"});
  EXPECT_EQ(runs.max_noise_percent, 0.0);
  EXPECT_EQ(runs.max_time_seconds, 60.0);
  const BenchOptions both = parse({"--runs", "20", "--max-noise", "0.5", "--max-time", "0"});
  EXPECT_EQ(both.max_noise_percent, 0.5);
  EXPECT_EQ(both.max_time_seconds, 0.0);
  EXPECT_EQ(parse({"--max-noise", "100"}).max_noise_percent, 100.0);
  EXPECT_EQ(parse({"--max-time", "604800"}).max_time_seconds, 604800.0);
}

// --trials auto plans the most trials and leaves the stopping to the driver; a number is exactly that many trials.
TEST(Options, TrialsAreANumberOrAuto) {
  const BenchOptions automatic = parse({"--trials", "auto"});
  EXPECT_TRUE(automatic.adaptive_trials);
  EXPECT_EQ(automatic.trials, kMaxAutoTrials);
  // The configurations of one trial, which name the default results file whatever the trials.
  EXPECT_EQ(automatic.configuration_count(2), 2u);
  EXPECT_EQ(automatic.default_output_path(2), "mgpu_bench_large_b32_n1-2.h5");
  const BenchOptions three = parse({"--trials", "3"});
  EXPECT_FALSE(three.adaptive_trials);
  EXPECT_EQ(three.trials, 3);
  EXPECT_EQ(parse({"--trials", "1000"}).trials, 1000);
  EXPECT_LT(kMinAutoTrials, kMaxAutoTrials);
  // Fewer let the width rule stop where a few trials agree by chance (tests/study/test_trial_stopping.cpp).
  EXPECT_GE(kMinAutoTrials, 5);
}

// Without --gpus, N > 1 ranks measure the 1-GPU baseline beside the N GPUs (the speedup needs both); one rank runs
// 1 GPU alone; an explicit --gpus still rules.
TEST(Options, WithoutGpusSeveralRanksAlsoMeasureTheBaseline) {
  const BenchOptions options = parse({});
  EXPECT_EQ(options.gpu_counts(1), std::vector<int>{1});
  EXPECT_EQ(options.gpu_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(options.gpu_counts(4), (std::vector<int>{1, 4}));
  EXPECT_EQ(options.configuration_count(2), 2u);
  EXPECT_EQ(options.default_output_path(2), "mgpu_bench_large_b32_n1-2.h5");
  EXPECT_EQ(parse({"--gpus", "2"}).gpu_counts(2), std::vector<int>{2});
  EXPECT_EQ(parse({"--gpus", "2"}).default_output_path(2), "mgpu_bench_large_b32_n2.h5");
  EXPECT_EQ(parse({"--batch", "8,16"}).configuration_count(2), 4u);
  EXPECT_EQ(parse({"--batch", "8,16"}).default_output_path(2), "mgpu_bench_sweep_4configs.h5");
}

TEST(Options, ParsesEverything) {
  const BenchOptions options = parse({"--model",
                                      "medium",
                                      "--batch",
                                      "128",
                                      "--warmup",
                                      "0",
                                      "--steps",
                                      "7",
                                      "--runs",
                                      "3",
                                      "--seed",
                                      "18446744073709551615",
                                      "--device",
                                      "cpu",
                                      "--nccl-algo",
                                      "tree",
                                      "--nccl-proto",
                                      "SIMPLE",
                                      "--output",
                                      "x.h5",
                                      "--force",
                                      "--dropout",
                                      "0"});
  EXPECT_EQ(options.sweep.front().model.name, "medium");
  EXPECT_EQ(options.sweep.front().model.dropout, 0.0);
  EXPECT_EQ(options.sweep.front().global_batches, std::vector<int>{128});
  EXPECT_EQ(options.settings.training.warmup_steps, 0);
  EXPECT_EQ(options.settings.training.measured_steps, 7);
  EXPECT_EQ(options.settings.runs_requested, 3);
  EXPECT_EQ(options.settings.training.seed, 18446744073709551615ull);
  EXPECT_EQ(options.device, DeviceChoice::cpu);
  EXPECT_EQ(options.settings.nccl_algo, "Tree");
  EXPECT_EQ(options.settings.nccl_proto, "Simple");
  EXPECT_EQ(options.output_path, "x.h5");
  EXPECT_TRUE(options.force);
}

TEST(Options, CustomLayers) {
  const BenchOptions options = parse({"--layers", "50,256,3", "--dropout", "0.5"});
  EXPECT_EQ(options.sweep.front().model.name, "custom");
  EXPECT_EQ(options.sweep.front().model.widths, (std::vector<int>{50, 256, 3}));
  EXPECT_EQ(options.default_output_path(1), "mgpu_bench_50-256-3_b32_n1.h5");
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
      {{"--trials", "0"}, "--trials 0"},
      {{"--trials", "1001"}, "--trials 1001"},
      {{"--trials", "two"}, "two"},
      {{"--trials", "autos"}, "'autos' is not a whole number"},
      {{"--trials", "3x"}, "'3x' is not a whole number"},
      {{"--trials", "3,4"}, "--trials '3,4': one number"},
      {{"--trials", "auto", "--resume"}, "--trials auto and --resume"},
      {{"--batch", "8,0"}, "--batch 0"},
      {{"--batch", "8,16,8"}, "8 is given twice"},
      {{"--batch", "8,,16"}, "'' is not a whole number"},
      {{"--batch", "8,"}, "--batch '8,'"},
      {{"--gpus", "1,x"}, "'x' is not a whole number"},
      {{"--gpus", "0"}, "--gpus 0"},
      {{"--gpus", "2,2"}, "2 is given twice"},
      {{"--model", "medium,medium"}, "medium is given twice"},
      {{"--model", "medium,huge"}, "huge"},
      {{"--sweep", "medium"}, "MODEL:B1,B2"},
      {{"--sweep", "huge:8"}, "huge"},
      {{"--sweep", "medium:8", "--sweep", "medium:16"}, "twice"},
      {{"--sweep", "medium:8", "--batch", "16"}, "--sweep excludes"},
      {{"--resume", "--force"}, "--resume and --force"},
      {{"--config", "/no/such/study.ini"}, "/no/such/study.ini"},
      {{"--graph", "yes"}, "--graph 'yes'"},
      {{"--overlap", "1"}, "--overlap '1'"},
      {{"--overlap-order", "reverse"}, "--overlap-order 'reverse'"},
      {{"--fuse-optimizer", "yes"}, "--fuse-optimizer 'yes'"},
      {{"--bucket-mb", "0"}, "--bucket-mb 0"},
      {{"--bucket-mb", "-2"}, "--bucket-mb -2"},
      {{"--bucket-mb", "nan"}, "--bucket-mb"},
      {{"--bucket-mb", "9.99e-7"}, "--bucket-mb"},     // just below the smallest cap
      {{"--bucket-mb", "1.000001e6"}, "--bucket-mb"},  // just above the largest
      {{"--precision", "fp16"}, "--precision 'fp16'"},
      {{"--timing", "some"}, "--timing 'some'"},
      {{"--accumulate", "0"}, "--accumulate 0"},
      {{"--grad-dtype", "fp16"}, "--grad-dtype 'fp16'"},
      {{"--optimizer-sharding", "zero"}, "--optimizer-sharding 'zero'"},
      {{"--accumulate", "1025"}, "--accumulate 1025"},
      {{"--gemm-tuning", "both"}, "--gemm-tuning 'both'"},
      {{"--nccl-max-ctas", "-1"}, "--nccl-max-ctas -1"},
      {{"--nccl-max-ctas", "65"}, "--nccl-max-ctas 65"},  // just above NCCL's most channels
      {{"--nccl-max-ctas", "2.5"}, "--nccl-max-ctas"},
      {{"--overlap-sm-target", "-1"}, "--overlap-sm-target -1"},
      {{"--overlap-sm-target", "1025"}, "--overlap-sm-target 1025"},
      {{"--timeout", "-1"}, "--timeout '-1'"},
      {{"--timeout", "nan"}, "--timeout 'nan'"},
      {{"--timeout", "inf"}, "--timeout 'inf'"},
      {{"--timeout", "5s"}, "--timeout '5s'"},
      {{"--timeout", "1e9"}, "--timeout '1e9'"},
      {{"--max-noise", "-0.1"}, "--max-noise '-0.1'"},
      {{"--max-noise", "100.01"}, "--max-noise '100.01'"},  // just above the largest
      {{"--max-noise", "1%"}, "--max-noise '1%'"},
      {{"--max-time", "-1"}, "--max-time '-1'"},
      {{"--max-time", "604801"}, "--max-time '604801'"},  // just above a week
      {{"--max-time", "nan"}, "--max-time 'nan'"},
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
  EXPECT_EQ(defaults.step.fuse_optimizer, Toggle::automatic);
  EXPECT_EQ(defaults.step.bucket_mb, 8.0);
  EXPECT_EQ(defaults.step.precision, Precision::fp32);
  EXPECT_EQ(defaults.step.timing, TimingMode::interleaved);
  EXPECT_EQ(defaults.step.accumulate_steps, 1);
  EXPECT_EQ(defaults.step.overlap_order, WeightGradientOrder::deferred);
  EXPECT_EQ(parse({"--overlap-order", "layerwise"}).step.overlap_order, WeightGradientOrder::layerwise);
  EXPECT_EQ(defaults.step.overlap_update, OverlapUpdate::per_bucket);
  EXPECT_EQ(parse({"--overlap-update", "after-last"}).step.overlap_update, OverlapUpdate::after_last);
  EXPECT_EQ(defaults.step.nccl_max_ctas, 0);
  EXPECT_EQ(parse({"--nccl-max-ctas", "64"}).step.nccl_max_ctas, 64);
  EXPECT_EQ(defaults.step.overlap_sm_target, 0);
  EXPECT_EQ(parse({"--overlap-sm-target", "1024"}).step.overlap_sm_target, 1024);
  const BenchOptions set = parse({"--graph", "off", "--overlap", "on", "--bucket-mb", "0.5", "--precision", "tf32",
                                  "--timing", "none", "--accumulate", "4", "--grad-dtype", "bf16"});
  EXPECT_EQ(set.step.graph, Toggle::off);
  EXPECT_EQ(set.step.overlap, Toggle::on);
  EXPECT_EQ(set.step.bucket_mb, 0.5);
  // The cap's bounds are accepted themselves.
  EXPECT_EQ(parse({"--bucket-mb", "1e-6"}).step.bucket_mb, 1e-6);
  EXPECT_EQ(parse({"--bucket-mb", "1e6"}).step.bucket_mb, 1e6);
  EXPECT_EQ(set.step.precision, Precision::tf32);
  EXPECT_EQ(set.step.timing, TimingMode::none);
  EXPECT_EQ(set.step.accumulate_steps, 4);
  EXPECT_EQ(set.step.grad_dtype, GradDtype::bf16);
  EXPECT_EQ(defaults.step.grad_dtype, GradDtype::fp32);
  EXPECT_EQ(parse({"--timing", "step"}).step.timing, TimingMode::step);
  EXPECT_STREQ(setting_name(TimingMode::step), "step");
}

TEST(Options, GemmTuningParses) {
  EXPECT_EQ(parse({}).step.gemm_tuning, GemmTuning::step);
  EXPECT_EQ(parse({"--gemm-tuning", "alone"}).step.gemm_tuning, GemmTuning::alone);
  EXPECT_NE(help_text().find("--gemm-tuning"), std::string::npos);
  EXPECT_STREQ(setting_name(GemmTuning::step), "step");
  EXPECT_STREQ(setting_name(GemmTuning::alone), "alone");
}

TEST(Options, FuseOptimizerParsesAutoOnOff) {
  EXPECT_EQ(parse({"--fuse-optimizer", "auto"}).step.fuse_optimizer, Toggle::automatic);
  EXPECT_EQ(parse({"--fuse-optimizer", "on"}).step.fuse_optimizer, Toggle::on);
  EXPECT_EQ(parse({"--fuse-optimizer", "off"}).step.fuse_optimizer, Toggle::off);
  const std::string message = error_of({"--fuse-optimizer", "maybe"});
  EXPECT_NE(message.find("--fuse-optimizer 'maybe'"), std::string::npos) << message;
  EXPECT_NE(help_text().find("--fuse-optimizer"), std::string::npos);
}

// What no back-end runs is refused while parsing, with the resolver's one line (config/resolver.hpp).
TEST(Options, CombinationsNoBackEndRunsAreRefusedWhileParsing) {
  EXPECT_EQ(error_of({"--fuse-optimizer", "on", "--precision", "bf16"}),
            "--fuse-optimizer on: needs --precision fp32 (got bf16)");
  EXPECT_EQ(error_of({"--optimizer-sharding", "on", "--overlap", "on"})
                .rfind("--optimizer-sharding on: needs "
                       "--overlap off",
                       0),
            0u);
  EXPECT_EQ(error_of({"--optimizer-sharding", "on", "--grad-dtype", "bf16"}),
            "--optimizer-sharding on: needs --grad-dtype fp32");
  EXPECT_EQ(parse({"--optimizer-sharding", "on"}).step.optimizer_sharding, Toggle::on);
  EXPECT_EQ(parse({}).step.optimizer_sharding, Toggle::automatic);
  EXPECT_NE(help_text().find("--optimizer-sharding"), std::string::npos);
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

TEST(Options, ListsMakeAGrid) {
  const BenchOptions options = parse({"--model", "medium,large", "--batch", "8,16,32", "--gpus", "1,2"});
  ASSERT_EQ(options.sweep.size(), 2u);
  EXPECT_EQ(options.sweep[0].model.name, "medium");
  EXPECT_EQ(options.sweep[1].model.name, "large");
  EXPECT_EQ(options.sweep[1].global_batches, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(options.gpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(options.configuration_count(2), 12u);
  EXPECT_EQ(options.default_output_path(2), "mgpu_bench_sweep_12configs.h5");
  EXPECT_EQ(parse({"--gpus", "1"}).default_output_path(2), "mgpu_bench_large_b32_n1.h5");
}

TEST(Options, SweepEntriesGiveEachModelItsBatches) {
  const BenchOptions options = parse({"--sweep", "medium:8,16", "--sweep", "large:4", "--dropout", "0"});
  ASSERT_EQ(options.sweep.size(), 2u);
  EXPECT_EQ(options.sweep[0].global_batches, (std::vector<int>{8, 16}));
  EXPECT_EQ(options.sweep[1].model.name, "large");
  EXPECT_EQ(options.sweep[1].model.dropout, 0.0);
  EXPECT_EQ(options.configuration_count(1), 3u);
}

TEST(Options, GpuCountsMustFitTheJobAndDivideEveryBatch) {
  const BenchOptions options = parse({"--batch", "8,12", "--gpus", "1,2,4"});
  EXPECT_NO_THROW(validate_for_ranks(options, 4));
  const auto message = [&](int ranks) {
    try {
      validate_for_ranks(options, ranks);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message(2).find("--gpus 4: the job has only 2 ranks"), std::string::npos) << message(2);
  const BenchOptions odd = parse({"--batch", "8,6", "--gpus", "1,4"});
  try {
    validate_for_ranks(odd, 4);
    ADD_FAILURE() << "batch 6 accepted on 4 GPUs";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch 6"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--gpus 4"), std::string::npos) << e.what();
  }
}

// A study file in a temporary directory, removed afterwards.
class StudyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_study_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  const char* write(const std::string& text) {
    path_ = dir_ + "/study.ini";
    std::ofstream(path_) << text;
    return path_.c_str();
  }
  std::string dir_, path_;
};

TEST_F(StudyFile, GivesTheGridAndTheCommandLineOverridesIt) {
  const char* file = write(
      "# a study\nsweep = medium:8,16,32\nsweep = large:4,8\ngpus = 1,2\nwarmup = 3\nsteps = 7\nruns = 5\n"
      "accumulate = 2\n");
  const BenchOptions options = parse({"--config", file});
  EXPECT_EQ(options.config_path, file);
  EXPECT_EQ(options.step.accumulate_steps, 2);
  ASSERT_EQ(options.sweep.size(), 2u);
  EXPECT_EQ(options.sweep[0].global_batches, (std::vector<int>{8, 16, 32}));
  EXPECT_EQ(options.sweep[1].global_batches, (std::vector<int>{4, 8}));
  EXPECT_EQ(options.gpus, (std::vector<int>{1, 2}));
  EXPECT_EQ(options.settings.training.warmup_steps, 3);
  EXPECT_EQ(options.settings.training.measured_steps, 7);
  EXPECT_EQ(options.settings.runs_requested, 5);
  EXPECT_EQ(options.configuration_count(1), 10u);

  // Scalars: the command line wins.
  const BenchOptions fewer = parse({"--config", file, "--runs", "2", "--gpus", "2"});
  EXPECT_EQ(fewer.settings.runs_requested, 2);
  EXPECT_EQ(fewer.gpus, std::vector<int>{2});
  EXPECT_EQ(fewer.settings.training.measured_steps, 7);
  // --model keeps the file's entries of those models; --batch replaces every entry's batches.
  const BenchOptions large = parse({"--config", file, "--model", "large"});
  ASSERT_EQ(large.sweep.size(), 1u);
  EXPECT_EQ(large.sweep[0].model.name, "large");
  EXPECT_EQ(large.sweep[0].global_batches, (std::vector<int>{4, 8}));
  const BenchOptions b64 = parse({"--config", file, "--batch", "64"});
  ASSERT_EQ(b64.sweep.size(), 2u);
  EXPECT_EQ(b64.sweep[0].global_batches, std::vector<int>{64});
  EXPECT_EQ(b64.sweep[1].global_batches, std::vector<int>{64});
  // --sweep on the command line replaces the file's entries.
  const BenchOptions own = parse({"--config", file, "--sweep", "medium:128"});
  ASSERT_EQ(own.sweep.size(), 1u);
  EXPECT_EQ(own.sweep[0].global_batches, std::vector<int>{128});
}

TEST_F(StudyFile, ModelAndBatchListsWork) {
  const char* file = write("model = medium,large\nbatch = 8,16\n");
  const BenchOptions options = parse({"--config", file, "--model", "medium"});
  ASSERT_EQ(options.sweep.size(), 1u);
  EXPECT_EQ(options.sweep[0].model.name, "medium");
  EXPECT_EQ(options.sweep[0].global_batches, (std::vector<int>{8, 16}));
}

TEST_F(StudyFile, BadContentsNameTheFile) {
  const auto error_for = [&](const std::string& text, std::vector<const char*> extra = {}) {
    std::vector<const char*> args = {"--config", write(text)};
    args.insert(args.end(), extra.begin(), extra.end());
    return error_of(args);
  };
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"bogus = 1\n", "bogus"},
           {"force = 1\n", "force"},
           {"runs = 0\n", "--runs 0"},
           {"batch = 8,x\n", "'x'"},
           {"sweep = medium:8\nbatch = 16\n", "either sweep entries or model/batch"},
       }) {
    const std::string message = error_for(text);
    EXPECT_NE(message.find(needle), std::string::npos) << text << " -> " << message;
    EXPECT_NE(message.find("study.ini"), std::string::npos) << text << " -> " << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(error_for("sweep = medium:8\n", {"--model", "large"}).find("no sweep entry"), std::string::npos);
  // A bad value on the command line is the command line's, even with a file.
  EXPECT_EQ(error_for("runs = 5\n", {"--runs", "0"}).find("study.ini"), std::string::npos);
}

}  // namespace
}  // namespace mgpu
