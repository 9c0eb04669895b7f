// Purpose: tests of mgpu_bench replay (console_replay.hpp) on a synthetic file: each run's records as its ranks
// measured them (phases, the loss, the wall span, the marks), the console re-made from the file (the build that
// measured, the lines the file records, the runs, how they ended, the verdict), and a file of no configuration refused.
// That the replay equals a real job's console word for word is CTest replay_remakes_the_console.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "analysis/analysis_fixture.hpp"
#include "platform/error.hpp"
#include "study/console_replay.hpp"

namespace mgpu {
namespace {

using analysis_test::kMeasured;
using analysis_test::kWarmup;
using analysis_test::synthetic_metadata;
using analysis_test::synthetic_record;

// Rank r of run k: forward 1 + k + r ms, step 2 + k + r ms; the loss 0.5 on rank 0, 0.7 on rank 1; the wall span 3 ms
// a measured step on rank 0, 4 on rank 1; run 2 marks no phase (NaN but the step, as the trainer records it).
RunRecord record(int run, int rank) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  const double f = run == 2 ? none : 1.0 + run + rank, s = 2.0 + run + rank;
  const std::vector<double> phases = {
      f, run == 2 ? none : 0.25, run == 2 ? none : 0.0, run == 2 ? none : 0.0, run == 2 ? none : 0.5, s};
  RunRecord r = synthetic_record({phases, phases}, 0, 0, 0);
  for (double& loss : r.loss) loss = rank == 0 ? 0.5 : 0.7;
  r.measured_wall_ms = (3.0 + rank) * kMeasured;
  r.phases_marked = run != 2;
  return r;
}

class ConsoleReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("mgpu_replay_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    for (const int ranks : {1, 2}) {
      ConfigurationMetadata m = synthetic_metadata(ranks == 1 ? "one" : "two", ranks);
      m.setup = "1.25 s on rank 0";
      m.unique_id_check = ranks == 2 ? "128-byte unique id from rank 0, identical on 2 ranks" : "";
      m.job_notice = "no rank sees a GPU: the CPU FALLBACK";
      m.job_plan = "2 configurations, 11 runs";
      ResultsWriter::Configuration c = writer.add_configuration(m);
      for (int run = 0; run < 5; ++run) {
        std::vector<RunRecord> per_rank;
        for (int rank = 0; rank < ranks; ++rank) per_rank.push_back(record(run, rank));
        writer.append_run(c, per_rank);
      }
      writer.record_replica_check(c, ranks == 1 ? "1 rank: nothing to compare" : "identical on 2 ranks");
      writer.finish(c, ranks == 2 ? "time: 0.5 s of runs, --max-time 0.4 s" : "");
    }
    writer.close();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string replayed() const {
    char* text = nullptr;
    std::size_t size = 0;
    std::FILE* out = open_memstream(&text, &size);
    replay_console(out, path_);
    std::fclose(out);
    const std::string printed(text, size);
    std::free(text);
    return printed;
  }

  std::string path_;
};

TEST_F(ConsoleReplay, EachRunIsWhatItsRanksMeasured) {
  const ResultsFile file = read_results_file(path_);
  const ConfigurationResults& two = file.configuration("two");
  for (int run = 0; run < 5; ++run) {
    const std::vector<RunRecord> per_rank = recorded_run(two, run);
    ASSERT_EQ(per_rank.size(), 2u);
    for (int rank = 0; rank < 2; ++rank) {
      const RunRecord expected = record(run, rank);
      const RunRecord& got = per_rank[rank];
      EXPECT_EQ(got.phases_marked, expected.phases_marked) << run;
      EXPECT_DOUBLE_EQ(got.measured_wall_ms, expected.measured_wall_ms);
      for (int step = kWarmup; step < kWarmup + kMeasured; ++step) {
        EXPECT_EQ(got.ms(Phase::step, step), expected.ms(Phase::step, step));
        // The file keeps the mean over ranks of the loss; a run without marks has no forward time.
        EXPECT_DOUBLE_EQ(got.loss[step], 0.6);
        if (run == 2) EXPECT_TRUE(std::isnan(got.ms(Phase::forward, step)));
        if (run != 2) EXPECT_EQ(got.ms(Phase::forward, step), expected.ms(Phase::forward, step));
      }
    }
  }
}

TEST_F(ConsoleReplay, PrintsTheJobsLinesFromTheFile) {
  const ResultsFile file = read_results_file(path_);
  const std::string planned = std::to_string(file.configuration("two").metadata.configuration.runs());
  const std::string console = replayed();
  for (const std::string& expected :
       {"#\n# NOTE: no rank sees a GPU: the CPU FALLBACK\n#\n# sweep: 2 configurations, 11 runs, results " + path_ +
            "\n",
        "# mgpu_bench " + file.root.project_version + " (git " + file.root.git_revision + ")\n",
        std::string("# set-up: 1.25 s on rank 0\n"),
        std::string("# unique id: 128-byte unique id from rank 0, identical on 2 ranks\n"),
        // Run 1 on 2 ranks: steps of 3 and 4 ms on the two ranks, so 4 ms and 8 / 0.004 samples/s.
        std::string("     1       2000.0    4.0000"),
        "# stopped after 5 of " + planned + " runs: time: 0.5 s of runs, --max-time 0.4 s\n",
        std::string("# replicas after the runs: identical on 2 ranks\n"), std::string("\n# sweep: mean over runs"),
        std::string("# verdict (")}) {
    EXPECT_NE(console.find(expected), std::string::npos) << expected << "\n" << console;
  }
  // One configuration's runs stopped early; the other's did not say so.
  EXPECT_EQ(console.find("# stopped after"), console.rfind("# stopped after"));
}

TEST(ConsoleReplayFile, AFileOfNoConfigurationIsRefused) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mgpu_replay_empty_" + std::to_string(::getpid()) + ".h5")).string();
  { ResultsWriter(path, true).close(); }
  try {
    replay_console(stdout, path);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + path + "' holds no configuration"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mgpu
