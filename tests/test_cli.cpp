// Purpose: end-to-end tests of the mgpu_bench binary: every bad input exits non-zero with one line naming the bad
// value and leaves no file; a good CPU run writes its results.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "results_file.hpp"

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
  struct stat info{};
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
    const std::string command = "cd '" + dir_ + "' && " + launcher + " '" + MGPU_BENCH_BINARY + "' " + args +
                                " > '" + dir_ + "/stdout.txt' 2> '" + dir_ + "/stderr.txt'";
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
  const std::string command = "cd '" + dir_ + "' && { '" + std::string(MGPU_BENCH_BINARY) +
                              "' --device cpu --model medium --batch 8 --warmup 1 --steps 1000 --runs 100000 --output '" +
                              out + "' > run.txt 2>&1 & pid=$!; for i in $(seq 1 600); do grep -q '^ *1 ' run.txt && "
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
  const Outcome refused = run("--device cpu --model medium --batch 8 --warmup 1 --steps 2 --runs 1 --output '" + out + "'");
  expect_rejected(refused, "--force", "");
  EXPECT_EQ(read_file(out), "precious");
  const Outcome forced =
      run("--device cpu --model medium --batch 8 --warmup 1 --steps 2 --runs 2 --force --output '" + out + "'");
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(read_file(out).substr(1, 3), "HDF");  // replaced by an HDF5 file (signature "\x89HDF")
  EXPECT_NE(forced.out.find("# summary over 2 runs"), std::string::npos) << forced.out;
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

}  // namespace
