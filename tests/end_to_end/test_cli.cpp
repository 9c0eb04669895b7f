// Purpose: end-to-end tests of the mgpu_bench binary: every bad input exits non-zero with one line naming the bad
// value and leaves no file; a good CPU run writes its results.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "results/results_reader.hpp"
#include "results/results_writer.hpp"
#include "stats/configuration_stats.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_cli_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Runs `[launcher] mgpu_bench args` in the temporary directory, capturing stdout and stderr separately.
  Outcome run(const std::string& args, const std::string& launcher = "") const {
    const std::string command = "cd '" + dir_ + "' && " + launcher + " '" + MGPU_BENCH_BINARY + "' " + args + " > '" +
                                dir_ + "/stdout.txt' 2> '" + dir_ + "/stderr.txt'";
    const int status = std::system(command.c_str());
    Outcome outcome;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    outcome.out = read_file(dir_ + "/stdout.txt");
    outcome.err = read_file(dir_ + "/stderr.txt");
    return outcome;
  }

  std::string dir_;
};

// A rejected command: non-zero exit, exactly one line of ours naming `needle`, and no output file. Under mpiexec
// the launcher adds its own report after ours; a single process must print nothing else.
void expect_rejected(const Outcome& outcome, const std::string& needle, const std::string& output_path,
                     bool single_process = true) {
  EXPECT_NE(outcome.exit_code, 0);
  std::vector<std::string> ours;
  for (const std::string& line : lines_of(outcome.err))
    if (line.rfind("mgpu_bench: error:", 0) == 0) ours.push_back(line);
  ASSERT_EQ(ours.size(), 1u) << "stderr:\n" << outcome.err;
  if (single_process) EXPECT_EQ(lines_of(outcome.err).size(), 1u) << "stderr:\n" << outcome.err;
  EXPECT_NE(ours[0].find(needle), std::string::npos) << ours[0];
  if (!output_path.empty()) {
    EXPECT_FALSE(exists(output_path)) << output_path << " was left behind";
  }
}

// The one configuration of the results file at `path` (the test fails where there is not exactly one).
mgpu::ConfigurationResults only_configuration(const std::string& path) {
  const mgpu::ResultsFile results = mgpu::read_results_file(path);
  EXPECT_EQ(results.configurations.size(), 1u) << path;
  return results.configurations.empty() ? mgpu::ConfigurationResults{} : results.configurations.front();
}

TEST_F(Cli, HelpAndVersionExitZero) {
  const Outcome help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--nccl-algo"), std::string::npos);
  const Outcome version = run("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("mgpu_bench "), std::string::npos);
}

TEST_F(Cli, SingleRankBadInputsAreOneLineAndLeaveNoFile) {
  const std::string out = dir_ + "/r.h5";
  const std::string tail = " --device cpu --output '" + out + "'";
  expect_rejected(run("--batch 0" + tail), "--batch 0", out);
  expect_rejected(run("--model huge" + tail), "huge", out);
  expect_rejected(run("--steps -3" + tail), "--steps -3", out);
  expect_rejected(run("--runs 0" + tail), "--runs 0", out);
  expect_rejected(run("--warmup 2147483647" + tail), "--warmup 2147483647", out);
  expect_rejected(run("--steps 99999999999" + tail), "--steps 99999999999", out);
  expect_rejected(run("--model medium stray words" + tail), "stray", out);
  // Too large to allocate: refused by the memory check before anything is allocated, naming the batch.
  expect_rejected(run("--model large --batch 16777216" + tail), "--batch 16777216", out);
  expect_rejected(run("--layers 1000000,1000000,3" + tail), "1000000-1000000-3", out);
  // Step execution the CPU fallback cannot honour, and values nothing can.
  expect_rejected(run("--graph on" + tail), "--graph on", out);
  expect_rejected(run("--precision tf32" + tail), "--precision tf32", out);
  expect_rejected(run("--bucket-mb 0" + tail), "--bucket-mb 0", out);
  expect_rejected(run("--timeout -5" + tail), "--timeout '-5'", out);
}

TEST_F(Cli, CudaWithoutAGpuIsRefused) {
  const Outcome outcome = run("--device cuda --model medium --steps 1 --runs 1 --output '" + dir_ + "/c.h5'");
  if (outcome.exit_code == 0) GTEST_SKIP() << "a GPU is visible: --device cuda works here";
  expect_rejected(outcome, "--device cuda", dir_ + "/c.h5");
}

// The file is flushed after every run, so a killed job keeps its finished runs. The kill comes within 50 ms of run
// 1's line, i.e. while run 2 trains (a run here takes about a second) and no HDF5 write is in flight.
TEST_F(Cli, KilledRunKeepsItsFinishedRuns) {
  const std::string out = dir_ + "/killed.h5";
  const std::string command =
      "cd '" + dir_ + "' && { '" + std::string(MGPU_BENCH_BINARY) +
      "' --device cpu --model medium --batch 8 --warmup 1 --steps 1000 --runs 100000 --output '" + out +
      "' > run.txt 2>&1 & pid=$!; for i in $(seq 1 600); do grep -q '^ *1 ' run.txt && "
      "break; sleep 0.05; done; kill -9 $pid; wait $pid; true; }";
  ASSERT_EQ(std::system(command.c_str()), 0);
  ASSERT_NE(read_file(dir_ + "/run.txt").find("\n     1 "), std::string::npos) << read_file(dir_ + "/run.txt");
  const mgpu::ResultsFile results = mgpu::read_results_file(out);
  ASSERT_EQ(results.configurations.size(), 1u);
  const mgpu::ConfigurationResults& configuration = results.configurations.front();
  EXPECT_GE(configuration.runs(), 2);
  EXPECT_LT(configuration.runs(), 100000);
  EXPECT_EQ(configuration.progress.complete, 0);
  for (int run = 0; run < configuration.runs(); ++run)
    EXPECT_GT(configuration.distributed_step_ms(run, configuration.steps() - 1), 0.0);
}

// The progress line goes to stderr, so a log of stdout never holds it; drawn in place (MGPU_PROGRESS=line, as the
// launchers set it on a terminal), a message such as the stop line erases it first and so starts on its own line.
TEST_F(Cli, ProgressStaysOutOfStdoutAndAStopLineStartsItsOwnLine) {
  const std::string out = dir_ + "/progress.h5";
  const std::string command =
      "cd '" + dir_ + "' && { MGPU_PROGRESS=line '" + std::string(MGPU_BENCH_BINARY) +
      "' --device cpu --model medium --batch 8 --warmup 1 --steps 20 --runs 100000 --output '" + out +
      "' > out.txt 2> err.txt & pid=$!; for i in $(seq 1 600); do grep -q 'run 2/' err.txt && break; sleep 0.05; "
      "done; kill -TERM $pid; wait $pid; true; }";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string stdout_text = read_file(dir_ + "/out.txt");
  const std::string stderr_text = read_file(dir_ + "/err.txt");
  EXPECT_EQ(stdout_text.find('\r'), std::string::npos) << stdout_text;
  EXPECT_EQ(stdout_text.find("done]"), std::string::npos) << stdout_text;
  EXPECT_NE(stderr_text.find("\r\033[K[0/1 done] medium_b8_n1_cpu run 2/"), std::string::npos) << stderr_text;
  EXPECT_NE(stderr_text.find("\r\033[Kmgpu_bench: stopped by SIGTERM: "), std::string::npos) << stderr_text;
}

TEST_F(Cli, UnwritableOutputDirectoryIsRefused) {
  const std::string missing = dir_ + "/no/such/dir/r.h5";
  expect_rejected(run("--device cpu --model medium --steps 1 --runs 1 --output '" + missing + "'"), missing, missing);
  // A path whose "directory" is a regular file cannot be created either, even by root.
  std::ofstream(dir_ + "/plain").put('x');
  const std::string under_file = dir_ + "/plain/r.h5";
  expect_rejected(run("--device cpu --model medium --steps 1 --runs 1 --output '" + under_file + "'"), under_file,
                  under_file);
}

TEST_F(Cli, ExistingOutputNeedsForce) {
  const std::string out = dir_ + "/existing.h5";
  std::ofstream(out) << "precious";
  const Outcome refused =
      run("--device cpu --model medium --batch 8 --warmup 1 --steps 2 --runs 1 --output '" + out + "'");
  expect_rejected(refused, "--force", "");
  EXPECT_EQ(read_file(out), "precious");
  const Outcome forced =
      run("--device cpu --model medium --batch 8 --warmup 1 --steps 2 --runs 2 --force --output '" + out + "'");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(read_file(out).substr(1, 3), "HDF");  // replaced by an HDF5 file (signature "\x89HDF")
  EXPECT_NE(forced.out.find("# summary over 2 runs"), std::string::npos) << forced.out;
  // The console leaves the statistics to the analyzer and says how to get them for this very file.
  EXPECT_NE(forced.out.find("tests (docs/statistics.md): mgpu_analyze report " + out + "\n"), std::string::npos)
      << forced.out;
}

TEST_F(Cli, DefaultOutputNameAndCpuFallbackNotice) {
  const Outcome outcome = run("--model medium --batch 4 --warmup 1 --steps 2 --runs 1 --device auto");
  if (outcome.out.find("CPU FALLBACK") == std::string::npos) GTEST_SKIP() << "a GPU is visible: no fallback here";
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_TRUE(exists(dir_ + "/mgpu_bench_medium_b4_n1.h5"));
}

TEST_F(Cli, TwoRankBadInputsAreOneLineAndLeaveNoFile) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/r2.h5";
  expect_rejected(run("--batch 3 --device cpu --output '" + out + "'", launcher), "--batch 3", out, false);
  std::ofstream(out) << "precious";
  expect_rejected(run("--batch 4 --device cpu --output '" + out + "'", launcher), "--force", "", false);
  EXPECT_EQ(read_file(out), "precious");
}

TEST_F(Cli, AllreduceSubcommandChecksEveryElementAndAddsItsGroupNextToTraining) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/study.h5";
  // A training file first: the sweep goes into it, and its configuration stays readable.
  const Outcome training =
      run("--device cpu --model medium --batch 8 --warmup 1 --steps 2 --runs 1 --output '" + out + "'", launcher);
  ASSERT_EQ(training.exit_code, 0) << training.err;
  const std::string args =
      "allreduce --device cpu --model medium --min-bytes 8 --max-bytes 64K --runs 2 --iters 3 "
      "--warmup 1 --output '" +
      out + "'";
  const Outcome sweep_run = run(args, launcher);
  ASSERT_EQ(sweep_run.exit_code, 0) << sweep_run.err;
  EXPECT_NE(sweep_run.out.find("# data check: every element right"), std::string::npos) << sweep_run.out;
  EXPECT_NE(sweep_run.out.find("medium gradient"), std::string::npos) << sweep_run.out;
  const mgpu::AllreduceSweep sweep = mgpu::read_allreduce_sweep(out);
  EXPECT_EQ(sweep.conditions.device, "cpu");
  EXPECT_EQ(sweep.conditions.ranks, 2);
  EXPECT_EQ(sweep.data_check_passed, 1);
  ASSERT_EQ(sweep.size_labels.size(), 15u);  // 8 B .. 64 KiB by 2, and the medium gradient
  EXPECT_EQ(sweep.bytes.values.back(), 258432 * 4);
  EXPECT_EQ(sweep.size_labels.back(), "medium gradient");
  for (double ms : sweep.time_ms.values) EXPECT_GT(ms, 0.0);
  // The training on 2 ranks measured 1 GPU and 2 (no --gpus).
  EXPECT_EQ(mgpu::read_results_file(out).configurations.size(), 2u);
  // A second sweep needs --force, and then replaces only the group.
  expect_rejected(run(args, launcher), "--force", "", false);
  const Outcome forced = run(args + " --force", launcher);
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(mgpu::read_results_file(out).configurations.size(), 2u);
}

// The sweep's waits are the watchdog's, bounded by its own --timeout: a rank stopped before the sweep's third size
// ends the job with status 124 and one line naming it, rank 0 having waited the 2 s asked (2.0 to 2.9 s as a
// loaded machine polls; not the 60 s default).
TEST_F(Cli, AllreduceSweepStopsAtItsTimeoutNamingTheStoppedRank) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2 -x MGPU_FAULT_STOP_BEFORE_ALLREDUCE_SIZE=1:2";
  const std::string output = " --output '" + dir_ + "/stall.h5'";
  const Outcome stalled =
      run("allreduce --device cpu --model none --max-bytes 1K --runs 1 --iters 2 --timeout 2" + output, launcher);
  EXPECT_EQ(stalled.exit_code, 124) << stalled.err;
  EXPECT_TRUE(std::regex_search(stalled.err, std::regex("watchdog stopped the job: .*rank 1@[^ ]+ made no progress; "
                                                        "rank 0@[^ ]+ waited 2\\.[0-9] s for ")))
      << stalled.err;
}

TEST_F(Cli, MeasurementSubcommandsRefuseBadInputInOneLine) {
  const std::string out = dir_ + "/t.h5";
  const std::string tail = " --device cpu --output '" + out + "'";
  expect_rejected(run("allreduce --min-bytes 0" + tail), "--min-bytes '0'", out);
  expect_rejected(run("allreduce --max-bytes 5T" + tail), "--max-bytes '5T'", out);
  expect_rejected(run("allreduce --min-bytes 1M --max-bytes 1K" + tail), "--max-bytes 1024", out);
  expect_rejected(run("allreduce --factor 1" + tail), "--factor 1", out);
  expect_rejected(run("allreduce --dtype fp16" + tail), "--dtype 'fp16'", out);
  expect_rejected(run("allreduce --dtype bf16" + tail), "--dtype bf16", out);
  expect_rejected(run("allreduce --model huge" + tail), "huge", out);
  expect_rejected(run("allreduce --iters 0" + tail), "--iters 0", out);
  expect_rejected(run("allreduce --nccl-algo warp" + tail), "warp", out);
  expect_rejected(run("allreduce 64" + tail), "'64'", out);
  expect_rejected(run("allreduce --timeout -1" + tail), "--timeout", out);
  expect_rejected(run("probe --batches 32,0 --output '" + out + "'"), "--batches", out);
  expect_rejected(run("probe --model medium,huge --output '" + out + "'"), "huge", out);
  const Outcome help = run("allreduce --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--max-bytes"), std::string::npos);
  EXPECT_NE(run("--help").out.find("mgpu_bench allreduce --help"), std::string::npos);
}

// On a machine with 2 GPUs (run test_cli there directly): the NCCL path, fp32 and bf16, every element checked.
TEST_F(Cli, AllreduceOnTwoGpusChecksEveryElement) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2 -x NCCL_NVLS_ENABLE=0";
  for (const char* dtype : {"fp32", "bf16"}) {
    const std::string out = dir_ + "/gpu_" + dtype + ".h5";
    const Outcome outcome = run("allreduce --device cuda --dtype " + std::string(dtype) +
                                    " --max-bytes 4M --runs 2 --iters 3 --output '" + out + "'",
                                launcher);
    if (outcome.exit_code != 0 && outcome.err.find("--device cuda") != std::string::npos)
      GTEST_SKIP() << "no GPU for every rank here: " << outcome.err.substr(0, outcome.err.find('\n'));
    ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
    const mgpu::AllreduceSweep sweep = mgpu::read_allreduce_sweep(out);
    EXPECT_EQ(sweep.conditions.device, "cuda");
    EXPECT_EQ(sweep.dtype, dtype);
    EXPECT_EQ(sweep.data_check_passed, 1);
    EXPECT_EQ(sweep.size_labels.back(), "large gradient");
  }
}

TEST_F(Cli, ProbeOnAGpuWritesItsGroup) {
  const std::string out = dir_ + "/probe.h5";
  const Outcome outcome =
      run("probe --model medium --batches 32 --square 256 --iters 2 --runs 2 --output '" + out + "'");
  if (outcome.exit_code != 0 && outcome.err.find("probe measures a GPU") != std::string::npos)
    GTEST_SKIP() << "no GPU here";
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const mgpu::HardwareProbe probe = mgpu::read_hardware_probe(out);
  EXPECT_EQ(probe.gemm_labels.size(), 12u);  // medium: 4 forward, 4 weight-gradient, 3 input-gradient, 1 square
  for (double ms : probe.gemm_ms.values) EXPECT_GT(ms, 0.0);
  for (double ms : probe.copy_ms.values) EXPECT_GT(ms, 0.0);
}

TEST_F(Cli, ProbeWithoutAGpuOrOnTwoRanksIsRefused) {
  const std::string out = dir_ + "/p.h5";
  const Outcome outcome = run("probe --runs 1 --output '" + out + "'");
  if (outcome.exit_code == 0) GTEST_SKIP() << "a GPU is visible: the probe runs here";
  expect_rejected(outcome, "probe measures a GPU", out);
  expect_rejected(run("probe --output '" + out + "'", std::string(MGPU_MPIEXEC) + " -n 2"), "one process", out, false);
}

// A sweep on a 2-rank job: the 1-GPU configurations run on rank 0 alone through their own communicator while rank 1
// waits, the 2-GPU ones on both; all in one file, and 1 rank trains exactly what 2 ranks train (same global batches).
TEST_F(Cli, TwoRankSweepRunsOneGpuConfigurationsOnTheFirstRank) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/sweep.h5";
  const Outcome outcome =
      run("--device cpu --model medium --batch 8,16 --gpus 1,2 --dropout 0 --warmup 1 --steps 3 "
          "--runs 2 --output '" +
              out + "'",
          launcher);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  // --runs 2 unmarked runs and, interleaved, one phase-marked run per configuration.
  EXPECT_NE(outcome.out.find("# sweep: 4 configurations, 12 runs"), std::string::npos) << outcome.out;
  // Off a terminal the progress comes as plain lines, on stderr: the report on stdout is the same with or without it.
  EXPECT_EQ(outcome.out.find("# progress:"), std::string::npos) << outcome.out;
  EXPECT_NE(outcome.err.find("# progress: medium_b16_n2_cpu finished; [4/4 done]"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.out.find("medium_b16_n2_cpu"), std::string::npos) << outcome.out;
  const mgpu::ResultsFile results = mgpu::read_results_file(out);
  const std::vector<std::string> names = {"medium_b8_n1_cpu", "medium_b8_n2_cpu", "medium_b16_n1_cpu",
                                          "medium_b16_n2_cpu"};
  ASSERT_EQ(results.configurations.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const mgpu::ConfigurationResults& c = results.configurations[i];
    EXPECT_EQ(c.metadata.name, names[i]);
    const int ranks = i % 2 == 0 ? 1 : 2;
    EXPECT_EQ(c.ranks(), ranks);
    EXPECT_EQ(c.metadata.hosts.size(), std::size_t(ranks));
    EXPECT_EQ(c.metadata.local_batch, c.metadata.global_batch() / ranks);
    EXPECT_EQ(c.runs(), 3);
    EXPECT_EQ(c.metadata.configuration.runs_requested, 2);  // what --runs said, not the runs the file holds
    EXPECT_EQ(c.progress.complete, 1);
    EXPECT_EQ(c.metadata.environment_preset, "none");
  }
  // Same samples, no dropout: the loss of every step agrees between 1 and 2 ranks up to fp32 summation order.
  for (std::size_t i = 0; i < names.size(); i += 2) {
    const auto& one = results.configurations[i].measurements.loss;
    const auto& two = results.configurations[i + 1].measurements.loss;
    ASSERT_EQ(one.values.size(), two.values.size());
    for (std::size_t k = 0; k < one.values.size(); ++k)
      EXPECT_NEAR(one.values[k], two.values[k], 1e-5 * std::abs(one.values[k])) << names[i] << " value " << k;
  }
}

// The user's first command on N > 1 ranks answers the question: without --gpus it measures the 1-GPU baseline
// beside the N GPUs, and the console ends with the verdict (the analyzer's statistics on the file just written):
// speedup with its interval, efficiency, Welch p and a sentence. 10 unmarked runs: the outlier screen keeps at least
// half of them, so both sides have the 5 an interval needs. One rank: the verdict says it needs two.
// --trials 2 on 2 ranks: the 1- and 2-GPU configurations alternate trial by trial, each records its trial, and the
// verdict judges the pair by its trial means; a --resume without --trials continues those trials.
TEST_F(Cli, TrialsAlternateAndTheVerdictUsesTheirMeans) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/trials.h5";
  const Outcome outcome =
      run("--device cpu --model medium --batch 16 --warmup 1 --steps 2 --runs 5 --trials 2 --output '" + out + "'",
          launcher);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const mgpu::ResultsFile results = mgpu::read_results_file(out);
  ASSERT_EQ(results.configurations.size(), 4u);
  const std::vector<std::pair<std::string, int>> expected = {{"medium_b16_n1_cpu_t1", 1},
                                                             {"medium_b16_n2_cpu_t1", 1},
                                                             {"medium_b16_n1_cpu_t2", 2},
                                                             {"medium_b16_n2_cpu_t2", 2}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(results.configurations[i].metadata.name, expected[i].first);
    EXPECT_EQ(results.configurations[i].metadata.configuration.trial, expected[i].second);
  }
  const std::size_t verdict = outcome.out.find("# verdict (");
  ASSERT_NE(verdict, std::string::npos) << outcome.out;
  const std::string tail = outcome.out.substr(verdict);
  EXPECT_TRUE(std::regex_search(tail, std::regex("#   medium, global batch 16, 2 GPUs, 2 trials: speedup [0-9.]+ "
                                                 "(\\[-?[0-9.]+, [0-9.]+\\]|\\(no interval\\)) over the trial means")))
      << tail;
  // (Two trials leave 1 degree of freedom: on a busy machine the interval is wide, its lower end may be negative.)
  // The trials' pairs are judged together, not each on its own runs.
  EXPECT_EQ(tail.find("global batch 16, 2 GPUs: speedup"), std::string::npos) << tail;

  // A --resume without --trials continues the file's two trials: all four configurations complete, none added.
  const Outcome resumed = run(
      "--device cpu --model medium --batch 16 --warmup 1 --steps 2 --runs 5 --resume --output '" + out + "'", launcher);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("# medium_b16_n2_cpu_t2: complete in"), std::string::npos) << resumed.out;
  EXPECT_EQ(mgpu::read_results_file(out).configurations.size(), 4u);
}

// --trials auto: a batch measures at least 5 trials and stops once every speedup's trial interval is within
// --max-noise or its trials took --max-time (a millisecond: at once); the later trials are left out of the file and of
// the sweep table, and the verdict judges the trials measured. MGPU_FAULT_STEADY_TRIALS gives the noise rule trials
// without spread, so that it stops at the minimum whatever this host's timing noise (a CPU trial's can exceed 100%).
TEST_F(Cli, AdaptiveTrialsStopAfterTheMinimumWhenPreciseEnoughOrOutOfTime) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string common = "--device cpu --model medium --batch 16 --warmup 1 --steps 2 --runs 5 --trials auto ";
  struct Case {
    std::string hook, limits, reason;
  };
  const std::vector<Case> cases = {
      {" -x MGPU_FAULT_STEADY_TRIALS=1", "--max-noise 1", "stopped: noise: every speedup's trial interval within "},
      {"", "--max-noise 0 --max-time 0.001", "stopped: time: "}};
  for (const auto& [hook, limits, reason] : cases) {
    const std::string out = dir_ + "/auto.h5";
    const Outcome outcome = run(common + limits + " --force --output '" + out + "'", launcher + hook);
    ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
    EXPECT_NE(outcome.out.find("# sweep: at most 20 configurations"), std::string::npos) << outcome.out;
    EXPECT_NE(outcome.out.find("# trials of medium, global batch 16: 5 of at most 10, " + reason), std::string::npos)
        << outcome.out;
    const mgpu::ResultsFile results = mgpu::read_results_file(out);
    ASSERT_EQ(results.configurations.size(), 10u) << limits;
    EXPECT_EQ(results.configurations.back().metadata.name, "medium_b16_n2_cpu_t5");
    EXPECT_EQ(outcome.out.find("medium_b16_n1_cpu_t6"), std::string::npos) << "a left-out trial in the table";
    EXPECT_NE(outcome.out.find("#   medium, global batch 16, 2 GPUs, 5 trials: speedup "), std::string::npos)
        << outcome.out;
  }
}

// The report's suggested 1-GPU baseline is the parser's inverse: a 2-GPU file written with every setting the CPU
// fallback takes off its default (mpiexec -n 2, --gpus 2: no baseline), its report's command run as it stands (the
// 1-GPU configuration alone), and the two files reported together pair the 2-GPU configuration with the command's.
TEST_F(Cli, TheSuggestedBaselineCommandMeasuresABaselineThatPairs) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const Outcome measured =
      run("--device cpu --layers 20,12,3 --dropout 0.1 --batch 6 --gpus 2 --warmup 0 --steps 2 --runs 2 --seed 5 "
          "--timing events --accumulate 2 --overlap-order layerwise --overlap-update after-last --bucket-mb 4 "
          "--gemm-tuning alone --graph off --overlap off --fuse-optimizer off --optimizer-sharding off --trials 1 "
          "--output two.h5",
          launcher);
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const auto analyze = [&](const std::string& args) {
    const std::string command = "cd '" + dir_ + "' && '" + MGPU_ANALYZE_BINARY + "' " + args + " 2>&1";
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    for (int c; pipe != nullptr && (c = std::fgetc(pipe)) != EOF;) out += static_cast<char>(c);
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
  };
  const auto [alone_status, alone] = analyze("report two.h5 --require-baseline");
  EXPECT_EQ(alone_status, 3) << alone;
  const std::string prefix = "measure one beside it with: mpirun -np 1 mgpu_bench";
  const std::size_t at = alone.find(prefix);
  ASSERT_NE(at, std::string::npos) << alone;
  const std::string arguments = alone.substr(at + prefix.size(), alone.find('\n', at) - at - prefix.size());
  EXPECT_EQ(arguments,
            " --layers 20,12,3 --dropout 0.1 --batch 6 --gpus 1 --device cpu --accumulate 2 --timing events "
            "--warmup 0 --steps 2 --runs 2 --seed 5");
  const Outcome baseline = run(arguments + " --output base.h5", std::string(MGPU_MPIEXEC) + " -n 1");
  ASSERT_EQ(baseline.exit_code, 0) << baseline.err;
  const auto [paired_status, paired] = analyze("report two.h5 base.h5 --require-baseline");
  EXPECT_EQ(paired_status, 0) << paired;
  EXPECT_EQ(paired.find("NO 1-GPU BASELINE"), std::string::npos) << paired;
  // The first file's 2-GPU configuration is paired with the command's 1-GPU one, and nothing is left over.
  EXPECT_NE(paired.find("Scaling: N GPUs against 1 GPU"), std::string::npos) << paired;
  EXPECT_NE(paired.find("     2  20-12-3_b6_n2_cpu accumulate_steps=2 "), std::string::npos) << paired;
  EXPECT_EQ(paired.find("not paired"), std::string::npos) << paired;
}

// Rank 0's unique id reaches the other ranks over MPI, the NCCL id's path, and is checked there: the banner names it;
// with MGPU_FAULT_ID_RANK=1 rank 1 changes a byte on arrival and the job ends with one line, status 1.
TEST_F(Cli, TheUniqueIdIsCheckedOnArrival) {
  const std::string args = "--device cpu --model medium --batch 16 --gpus 2 --warmup 1 --steps 2 --runs 2 --output '";
  const Outcome good = run(args + dir_ + "/id.h5'", std::string(MGPU_MPIEXEC) + " -n 2");
  ASSERT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("# unique id: 128-byte unique id from rank 0, identical on 2 ranks (FNV-1a 64 0x"),
            std::string::npos)
      << good.out;
  const Outcome bad = run(args + dir_ + "/id_bad.h5'", std::string(MGPU_MPIEXEC) + " -n 2 -x MGPU_FAULT_ID_RANK=1");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("mgpu_bench: error: rank 1 received another unique id than rank 0 sent (FNV-1a 64 0x"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.err.find("error:"), bad.err.rfind("error:")) << "one line: " << bad.err;
}

// MGPU_FAULT_REPLICA_RANK=1 makes rank 1 hash one flipped bit of its parameters: the check ends the job on both
// ranks with one line and status 1, and the configuration keeps its runs, incomplete, with the reason.
TEST_F(Cli, ReplicasThatDifferEndTheJobAndKeepTheRuns) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2 -x MGPU_FAULT_REPLICA_RANK=1";
  const std::string out = dir_ + "/replicas.h5";
  const Outcome outcome = run(
      "--device cpu --model medium --batch 16 --gpus 2 --warmup 1 --steps 2 --runs 2 --output '" + out + "'", launcher);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  const std::string reason =
      "medium_b16_n2_cpu: the data-parallel replicas diverged after its runs: rank 1's "
      "parameters differ from rank 0's (FNV-1a 64 0x";
  EXPECT_NE(outcome.err.find("mgpu_bench: error: " + reason), std::string::npos) << outcome.err;
  const mgpu::ConfigurationResults c = only_configuration(out);
  EXPECT_EQ(c.runs(), 3);  // 2 unmarked + 1 phase-marked
  EXPECT_EQ(c.progress.complete, 0);
  EXPECT_EQ(c.progress.interrupted.rfind(reason, 0), 0u) << c.progress.interrupted;
  EXPECT_EQ(c.progress.replica_check.rfind("rank 1's parameters differ from rank 0's", 0), 0u)
      << c.progress.replica_check;
}

// The stopping rule is asked between runs only: a configuration whose last run is the first at which --max-time would
// stop it (5 runs timed with events: an interval from its fifth) completes them all, with no reason to stop.
TEST_F(Cli, TheLastRunEndsAConfigurationWithoutAStop) {
  const std::string out = dir_ + "/last_run.h5";
  const Outcome outcome =
      run("--device cpu --model medium --batch 16 --gpus 1 --warmup 1 --steps 2 --runs 5 --timing events "
          "--max-time 1e-9 --output '" +
          out + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out.find("# stopped after"), std::string::npos) << outcome.out;
  const mgpu::ConfigurationResults c = only_configuration(out);
  EXPECT_EQ(c.runs(), 5);
  EXPECT_EQ(c.progress.complete, 1);
  EXPECT_EQ(c.progress.stopped_early, "");
}

// --max-time: a configuration whose runs have taken longer stops as soon as it has an interval (5 throughput runs the
// outlier screen keeps and, interleaved, a marked one: runs 0-5 unless a run is screened out), says so on the console
// and in stopped_early, and is complete.
TEST_F(Cli, MaxTimeEndsAConfigurationOnceItHasAnInterval) {
  const std::string out = dir_ + "/max_time.h5";
  const Outcome outcome =
      run("--device cpu --model medium --batch 16 --gpus 1 --warmup 1 --steps 2 --runs 20 "
          "--max-time 1e-9 --output '" +
          out + "'");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const mgpu::ConfigurationResults c = only_configuration(out);
  EXPECT_GE(c.runs(), 6);
  EXPECT_NE(outcome.out.find("# stopped after " + std::to_string(c.runs()) + " of 25 runs: time: "), std::string::npos)
      << outcome.out;
  const mgpu::stats::ConfigurationStats stats = mgpu::stats::compute_configuration_stats(c, out, {});
  // At least an interval's worth: a run the screen dropped at one check may be kept once later runs widen the spread.
  EXPECT_GE(stats.runs_kept, static_cast<int>(mgpu::stats::kMinimumRunsForInterval)) << "kept of " << c.runs();
  EXPECT_EQ(c.progress.complete, 1);
  EXPECT_EQ(c.progress.stopped_early.rfind("time: ", 0), 0u) << c.progress.stopped_early;
  EXPECT_EQ(c.measurements.phases_marked.at(4, 0), 1.0);  // every fifth run marks its phases
  EXPECT_EQ(c.measurements.phases_marked.at(5, 0), 0.0);
}

// MGPU_FAULT_CORRUPT_GEMM=1 zeroes one sample's output-layer product in every step of the CPU fallback (a wrong GEMM):
// the math check refuses the configuration before any run, with one line naming it, the error and the tolerance,
// status 1; its group keeps the check and no run, incomplete, with the reason.
TEST_F(Cli, AWrongGemmFailsTheMathCheckAndNoRunIsMeasured) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2 -x MGPU_FAULT_CORRUPT_GEMM=1";
  const std::string out = dir_ + "/math.h5";
  const Outcome outcome = run(
      "--device cpu --model medium --batch 16 --gpus 2 --warmup 1 --steps 2 --runs 2 --output '" + out + "'", launcher);
  EXPECT_EQ(outcome.exit_code, 1) << outcome.err;
  const std::regex refusal(
      "mgpu_bench: error: medium_b16_n2_cpu: the math check failed: after 3 steps rank [01]'s parameters are "
      "[0-9.e+-]+ of the reference's movement away from the reference's, beyond the tolerance 0.1; no run was "
      "measured\n");
  EXPECT_TRUE(std::regex_search(outcome.err, refusal)) << outcome.err;
  const mgpu::ConfigurationResults c = only_configuration(out);
  EXPECT_EQ(c.runs(), 0);
  EXPECT_EQ(c.progress.complete, 0);
  EXPECT_EQ(c.progress.interrupted.rfind("medium_b16_n2_cpu: the math check failed", 0), 0u) << c.progress.interrupted;
  EXPECT_EQ(c.metadata.math_check.rfind("FAILED: relative error ", 0), 0u) << c.metadata.math_check;
  ASSERT_EQ(c.metadata.math_check_errors.size(), 2u);
  // One sample of 8 per rank wrong: far beyond the tolerance (a correct fp32 step is within 1e-3 here).
  for (double error : c.metadata.math_check_errors) EXPECT_GT(error, 2 * c.metadata.math_check_tolerance);
  EXPECT_EQ(c.metadata.math_check_tolerance, 0.1);
  EXPECT_EQ(c.metadata.math_check_steps, 3);
}

TEST_F(Cli, TwoRanksWithoutGpusMeasureTheBaselineAndEndWithTheVerdict) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/verdict.h5";
  const Outcome outcome =
      run("--device cpu --model medium --batch 16 --warmup 1 --steps 3 --runs 10 --output '" + out + "'", launcher);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  const mgpu::ResultsFile results = mgpu::read_results_file(out);
  ASSERT_EQ(results.configurations.size(), 2u);
  EXPECT_EQ(results.configurations[0].metadata.name, "medium_b16_n1_cpu");
  EXPECT_EQ(results.configurations[1].metadata.name, "medium_b16_n2_cpu");
  for (const mgpu::ConfigurationResults& c : results.configurations) {
    EXPECT_EQ(c.metadata.configuration.training.timing, mgpu::TimingMode::interleaved);
    ASSERT_EQ(c.runs(), 12);  // 10 unmarked + 2 phase-marked (runs 4 and 9)
    for (int run = 0; run < c.runs(); ++run) {
      const bool marked = run == 4 || run == 9;
      EXPECT_EQ(c.measurements.phases_marked.at(run, 0), marked ? 1.0 : 0.0) << run;
      EXPECT_EQ(std::isnan(c.measurements.phase_ms[0].at(run, 0, 1)), !marked) << run;
      EXPECT_EQ(std::isnan(c.measurements.batch_generation_ms.at(run, 0)), marked) << run;
    }
  }
  // Each configuration's step passed the math check against float64 on every rank before its runs.
  for (const mgpu::ConfigurationResults& c : results.configurations) {
    EXPECT_EQ(c.metadata.math_check.rfind("passed: relative error ", 0), 0u) << c.metadata.math_check;
    ASSERT_EQ(c.metadata.math_check_errors.size(), static_cast<std::size_t>(c.metadata.ranks()));
    for (double error : c.metadata.math_check_errors) {
      EXPECT_GE(error, 0.0);
      EXPECT_LE(error, c.metadata.math_check_tolerance);
    }
    EXPECT_GT(c.metadata.math_check_seconds, 0.0);
  }
  EXPECT_NE(outcome.out.find("# math check: passed: relative error "), std::string::npos) << outcome.out;
  // Each banner says how long rank 0's set-up took; the CPU fallback verifies no GEMM candidate.
  EXPECT_TRUE(std::regex_search(outcome.out, std::regex("\n# set-up: [0-9]+\\.[0-9]{2} s on rank 0\n# math check: ")))
      << outcome.out;
  // The replicas were compared after the runs: bit-identical on 2 ranks, nothing to compare on 1.
  EXPECT_EQ(results.configurations[0].progress.replica_check, "1 rank: nothing to compare");
  EXPECT_EQ(results.configurations[1].progress.replica_check.rfind("identical on 2 ranks (FNV-1a 64 of ", 0), 0u)
      << results.configurations[1].progress.replica_check;
  EXPECT_NE(outcome.out.find("# replicas after the runs: identical on 2 ranks (FNV-1a 64 of "), std::string::npos)
      << outcome.out;
  // The verdict comes last, after the sweep table.
  const std::size_t verdict = outcome.out.find("# verdict (mgpu_analyze's statistics");
  ASSERT_NE(verdict, std::string::npos) << outcome.out;
  EXPECT_GT(verdict, outcome.out.find("# sweep: mean over runs"));
  // The sweep table counts the runs its throughput comes from and the phase-marked ones apart.
  EXPECT_TRUE(std::regex_search(outcome.out, std::regex("\n  medium_b16_n2_cpu +medium +16 +2 +10\\+2 ")))
      << outcome.out;
  const std::string tail = outcome.out.substr(verdict);
  EXPECT_TRUE(std::regex_search(tail, std::regex("#   medium, global batch 16, 2 GPUs: speedup [0-9.]+ \\[[0-9.]+, "
                                                 "[0-9.]+\\], efficiency [0-9.]+%, Welch p [-0-9.e]+ \\(kept runs "
                                                 "([5-9]|10)/10 on 2, ([5-9]|10)/10 on 1\\)\n")))
      << tail;
  EXPECT_TRUE(std::regex_search(tail, std::regex("#     2 GPUs are [0-9.]+x as fast as 1 \\[[0-9.]+, [0-9.]+\\]: ")))
      << tail;

  const Outcome single =
      run("--device cpu --model medium --batch 16 --warmup 1 --steps 2 --runs 1 --output '" + dir_ + "/one.h5'");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_NE(single.out.find("# verdict: needs >= 2 ranks, this job has 1"), std::string::npos) << single.out;
}

TEST_F(Cli, SweepListsAreValidatedAgainstTheJob) {
  const std::string launcher = std::string(MGPU_MPIEXEC) + " -n 2";
  const std::string out = dir_ + "/bad.h5";
  expect_rejected(run("--device cpu --gpus 1,3 --output '" + out + "'", launcher), "--gpus 3", out, false);
  expect_rejected(run("--device cpu --batch 8,9 --gpus 1,2 --output '" + out + "'", launcher), "--batch 9", out, false);
  expect_rejected(run("--device cpu --batch 8,8 --output '" + out + "'"), "8 is given twice", out);
  expect_rejected(run("--device cpu --resume --force --output '" + out + "'"), "--resume and --force", out);
  // --resume never touches a file it cannot continue.
  const std::string foreign = dir_ + "/foreign.h5";
  std::ofstream(foreign) << "precious";
  expect_rejected(run("--device cpu --resume --steps 1 --runs 1 --output '" + foreign + "'"), "not an HDF5 file", "");
  EXPECT_EQ(read_file(foreign), "precious");
  // --gemm-plan names a file, and follows tuned GEMMs, of which the CPU fallback has none.
  expect_rejected(run("--device cpu --gemm-plan '' --output '" + out + "'"), "--gemm-plan ''", out);
  expect_rejected(run("--device cpu --gemm-plan '" + foreign + "' --output '" + out + "'"),
                  "--gemm-plan: the CPU fallback tunes no GEMMs", out);
}

// Killed in the middle of a sweep, resumed: the finished configuration is kept as it was, the interrupted one is
// replaced by a complete second attempt, and a changed command is refused without touching the file. (--timing
// events: every run alike, so that --runs is the run count of the file.)
TEST_F(Cli, ResumeAfterKillSkipsTheCompleteAndRerunsTheIncomplete) {
  const std::string out = dir_ + "/resume.h5";
  const std::string args =
      "--device cpu --model medium --batch 8,16 --gpus 1 --warmup 1 --steps 10 --runs 60 "
      "--timing events --output '" +
      out + "'";
  // Killed once the second configuration has finished its first run (the second run line numbered 0).
  const std::string command = "cd '" + dir_ + "' && { '" + std::string(MGPU_BENCH_BINARY) + "' " + args +
                              " > run.txt 2>&1 & pid=$!; for i in $(seq 1 1200); do "
                              "[ $(grep -c '^ *0 ' run.txt) -ge 2 ] && break; sleep 0.05; done; "
                              "kill -9 $pid; wait $pid; true; }";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const mgpu::ResultsFile killed = mgpu::read_results_file(out);
  ASSERT_EQ(killed.configurations.size(), 2u) << read_file(dir_ + "/run.txt");
  EXPECT_EQ(killed.configurations[0].progress.complete, 1);
  EXPECT_EQ(killed.configurations[1].progress.complete, 0);
  EXPECT_LT(killed.configurations[1].runs(), 60);

  expect_rejected(run(args), "--force", "");  // never overwritten without --force
  // A different command (another run count) would mix measurements: refused, naming the attribute.
  const std::string changed =
      "--device cpu --model medium --batch 8,16 --gpus 1 --warmup 1 --steps 10 --runs 59 "
      "--timing events --resume --output '" +
      out + "'";
  expect_rejected(run(changed), "runs_requested is 60 in the file, 59 in this command", "");

  // The rest of the sweep, smaller: the complete configuration is skipped, so its 60 runs are not redone.
  const Outcome resumed = run(args + " --resume");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("medium_b8_n1_cpu: complete in"), std::string::npos) << resumed.out;
  const mgpu::ResultsFile after = mgpu::read_results_file(out);
  ASSERT_EQ(after.configurations.size(), 2u);
  const mgpu::ConfigurationResults& kept = after.configuration("medium_b8_n1_cpu");
  const mgpu::ConfigurationResults& rerun = after.configuration("medium_b16_n1_cpu");
  EXPECT_EQ(kept.metadata.started_utc, killed.configurations[0].metadata.started_utc);
  EXPECT_EQ(kept.metadata.attempt, 1);
  EXPECT_EQ(kept.runs(), 60);
  EXPECT_EQ(rerun.metadata.attempt, 2);
  EXPECT_EQ(rerun.progress.complete, 1);
  EXPECT_EQ(rerun.runs(), 60);
}

}  // namespace
