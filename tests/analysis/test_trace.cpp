// Purpose: the Chrome trace of `mgpu_analyze trace` for synthetic files (analysis_fixture.hpp): every event has the
// trace-event fields Perfetto needs, every slice's duration is the dataset value it came from (a phase overrunning its
// step by the rounding of fp32 event times ends with the step), phases sit inside their
// step in the documented order, ranks are aligned where their reductions end, warm-up steps are marked, clocks are
// counters, steps without phase marks show whole, and runs are chosen as asked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analysis_fixture.hpp"
#include "platform/error.hpp"
#include "trace.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class Trace : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_trace_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    add_single(writer);
    add_double(writer);
    add_step_only(writer);
    writer.close();
    file_ = read_results_file(path_);
    for (const ConfigurationResults& c : file_.configurations)
      stats_.push_back(compute_configuration_stats(c, "synthetic.h5", {}));
  }
  void TearDown() override { fs::remove(path_); }

  // The value of the dataset named by a slice's args, read back from the file.
  double dataset_value(int pid, const nlohmann::json& args) const {
    const ConfigurationResults& c = *stats_[static_cast<std::size_t>(pid - 1)].results;
    const std::string dataset = args.at("dataset");
    for (int p = 0; p < kPhaseCount; ++p)
      if (dataset == std::string(kPhaseNames[p]) + "_ms")
        return c.measurements.phase_ms[p].at(args.at("run").get<int>(), args.at("rank").get<int>(),
                                             args.at("step").get<int>());
    ADD_FAILURE() << "unknown dataset " << dataset;
    return 0;
  }

  std::string path_;
  ResultsFile file_;
  std::vector<ConfigurationStats> stats_;
};

std::vector<nlohmann::json> events_of(const nlohmann::json& trace, const std::string& phase_type) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : trace.at("traceEvents"))
    if (e.at("ph") == phase_type) out.push_back(e);
  return out;
}

TEST_F(Trace, EveryEventIsTraceEventJsonAndEverySliceIsItsDatasetValue) {
  RunSelection all;
  all.kind = RunSelection::Kind::all;
  // Through text, as a viewer reads it.
  const nlohmann::json trace = nlohmann::json::parse(chrome_trace(stats_, all).dump());
  ASSERT_TRUE(trace.at("traceEvents").is_array());
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  std::size_t checked = 0;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    for (const char* field : {"ph", "pid", "tid", "ts", "name"}) ASSERT_TRUE(e.contains(field)) << e.dump();
    EXPECT_TRUE(e.at("pid").is_number_integer() && e.at("tid").is_number_integer()) << e.dump();
    EXPECT_TRUE(e.at("ts").is_number()) << e.dump();
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M" || ph == "C" || ph == "i") << ph;
    if (ph != "X") continue;
    ASSERT_TRUE(e.contains("dur") && e.at("dur").is_number()) << e.dump();
    EXPECT_GE(e.at("dur").get<double>(), 0);
    if (e.at("cat") == "run") continue;  // a run's slice spans its steps
    EXPECT_EQ(e.at("dur").get<double>(), dataset_value(e.at("pid"), e.at("args")) * 1000.0) << e.dump();
    ++checked;
  }
  // The fixture's warm-up step has every phase at 100 ms (6 slices), measured steps as described there. single: 6
  // runs x (6 + 2 x (step + forward, backward, optimizer; the all-reduce is 0)); double: 5 runs x 2 ranks x 3 steps x
  // (step + 5 phases); step_only: 5 runs x (6 + 2 whole steps).
  EXPECT_EQ(checked, 6u * (6 + 2 * 4) + 5u * 2 * 3 * 6 + 5u * (6 + 2));
}

// Each configuration's first run starts the trace: its earliest slice is at time 0.
TEST_F(Trace, EachConfigurationStartsAtTimeZero) {
  RunSelection all;
  all.kind = RunSelection::Kind::all;
  std::map<int, double> earliest;  // pid -> µs
  for (const nlohmann::json& e : events_of(chrome_trace(stats_, all), "X")) {
    const int pid = e.at("pid");
    const double ts = e.at("ts");
    earliest[pid] = earliest.count(pid) ? std::min(earliest[pid], ts) : ts;
  }
  ASSERT_EQ(earliest.size(), stats_.size());
  for (const auto& [pid, ts] : earliest) EXPECT_EQ(ts, 0.0) << "pid " << pid;
}

TEST_F(Trace, SlicesOnATrackNestOrFollowEachOther) {
  // A trace viewer drops a slice that starts inside another on its track and ends after it. (The fixture's warm-up
  // steps have every phase at 100 ms in a 100 ms step, more than the step holds: their phases are left out here.)
  RunSelection all;
  all.kind = RunSelection::Kind::all;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  for (const nlohmann::json& e : events_of(chrome_trace(stats_, all), "X")) {
    if (e.at("cat") == "phase" && e.at("args").at("warmup") == true) continue;
    const double ts = e.at("ts");
    tracks[{e.at("pid"), e.at("tid")}].push_back({ts, ts + e.at("dur").get<double>()});
  }
  constexpr double kNanosecond = 1e-3;  // µs
  for (auto& [track, slices] : tracks) {
    // By start, the longer first, so a parent precedes its children.
    std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::pair<double, double>> open;
    for (const auto& slice : slices) {
      while (!open.empty() && open.back().second <= slice.first + kNanosecond) open.pop_back();
      if (!open.empty())
        EXPECT_LE(slice.second, open.back().second + kNanosecond)
            << "pid " << track.first << " tid " << track.second << ": [" << slice.first << ", " << slice.second
            << "] overruns [" << open.back().first << ", " << open.back().second << "]";
      open.push_back(slice);
    }
  }
}

TEST_F(Trace, PhasesNestInTheirStepAndRanksMeetWhereTheReductionEnds) {
  RunSelection first;
  first.kind = RunSelection::Kind::listed;
  first.listed = {0};
  const nlohmann::json trace = chrome_trace({stats_[1]}, first);  // double
  // Per rank, measured step 1 (index 1 after the warm-up step): where each phase starts and ends, µs.
  std::map<std::string, std::pair<double, double>> at[2];
  for (const nlohmann::json& e : events_of(trace, "X")) {
    if (e.at("cat") == "run" || e.at("args").at("step") != 1) continue;
    const double ts = e.at("ts");
    at[e.at("args").at("rank").get<int>()][e.at("name")] = {ts, ts + e.at("dur").get<double>()};
  }
  for (int rank = 0; rank < 2; ++rank) {
    const auto& p = at[rank];
    EXPECT_DOUBLE_EQ(p.at("forward").first, p.at("step 1").first);
    EXPECT_DOUBLE_EQ(p.at("backward").first, p.at("forward").second);
    EXPECT_DOUBLE_EQ(p.at("exposed_comm").first, p.at("backward").second);
    EXPECT_DOUBLE_EQ(p.at("optimizer").first, p.at("exposed_comm").second);
    EXPECT_DOUBLE_EQ(p.at("allreduce").second, p.at("exposed_comm").second);  // the wait ends with the reduction
    EXPECT_LE(p.at("optimizer").second, p.at("step 1").second + 1e-9);
  }
  // Both ranks' reductions end at the same moment; rank 0, the slow one at step 1 (2.2 ms to its reduction's end
  // against rank 1's 0.15 ms), starts first.
  EXPECT_DOUBLE_EQ(at[0].at("allreduce").second, at[1].at("allreduce").second);
  EXPECT_DOUBLE_EQ(at[1].at("step 1").first - at[0].at("step 1").first, (2.2 - 0.15) * 1000);
  // Phases are on the rank's compute track, the all-reduce on its communication track just after it: every rank's
  // two tracks adjacent, compute first, no two ranks sharing one.
  for (const nlohmann::json& e : events_of(trace, "X")) {
    if (e.at("cat") == "run") continue;
    const int rank = e.at("args").at("rank").get<int>();
    EXPECT_EQ(e.at("tid").get<int>(), e.at("name") == "allreduce" ? 2 * rank + 2 : 2 * rank + 1) << e.dump();
  }
}

TEST_F(Trace, WarmupMarkedCountersAndSettings) {
  const nlohmann::json trace = chrome_trace({stats_[1]}, RunSelection{});
  bool warmup = false, clocks = false, settings = false;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("name") == "warm-up step 0") {
      warmup = true;
      EXPECT_EQ(e.at("cat"), "warmup");
      EXPECT_EQ(e.at("args").at("warmup"), true);
    }
    if (e.at("ph") == "C" && e.at("name") == "rank 1 clocks (MHz)") {
      clocks = true;
      EXPECT_EQ(e.at("args").at("sm_clock_mhz"), 1900);
    }
    if (e.at("ph") == "i" && e.at("name") == "configuration settings") {
      settings = true;
      EXPECT_EQ(e.at("args").at("global_batch"), "8");
      EXPECT_EQ(e.at("args").at("ranks"), "2");
    }
  }
  EXPECT_TRUE(warmup && clocks && settings);
}

TEST_F(Trace, EveryTrackASliceIsOnIsNamedAfterItsRank) {
  const nlohmann::json trace = chrome_trace({stats_[1]}, RunSelection{});  // 2 ranks
  std::map<int, std::string> names;
  for (const nlohmann::json& e : events_of(trace, "M"))
    if (e.at("name") == "thread_name") names[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
  ASSERT_EQ(names.size(), 4u);  // compute and communication, each rank
  EXPECT_EQ(names.at(1), "rank 0 compute node0 GPU");
  EXPECT_EQ(names.at(2), "rank 0 communication");
  EXPECT_EQ(names.at(3), "rank 1 compute node0 GPU");
  EXPECT_EQ(names.at(4), "rank 1 communication");
  for (const nlohmann::json& e : events_of(trace, "X")) EXPECT_EQ(names.count(e.at("tid").get<int>()), 1u) << e.dump();
}

TEST_F(Trace, StepsWithoutPhaseMarksShowWhole) {
  const nlohmann::json trace = chrome_trace({stats_[2]}, RunSelection{});  // step_only
  std::size_t steps = 0;
  for (const nlohmann::json& e : events_of(trace, "X")) {
    if (e.at("cat") != "step") continue;  // the run, and the fixture's warm-up step (which has phases)
    EXPECT_EQ(e.at("args").at("dataset"), "step_ms") << e.dump();
    ++steps;
  }
  // One run (the median), 2 measured steps, each a slice of its own and nothing inside it.
  EXPECT_EQ(steps, 2u);
  EXPECT_EQ(events_of(trace, "X").size(), 1u + 6 + 2);
}

TEST(TraceRounding, APhaseOverrunningItsStepByRoundingEndsWithTheStep) {
  // Forward 1, backward 2, optimizer 1.0000005 in a 4 ms step: the phases end 5e-7 ms (1.25e-7 of the step, the
  // rounding of fp32 event times) after the step. Drawn to the step's end so the viewer keeps it; args keep the value.
  const ResultsFile file = steady_results("mgpu_trace_rounding", "rounded", {1.0, 2.0, 0.0, 0.0, 1.0000005, 4.0}, 1);
  const std::vector<ConfigurationStats> stats = {compute_configuration_stats(file.configurations[0], "r.h5", {})};
  std::size_t optimizers = 0;
  for (const nlohmann::json& e : events_of(chrome_trace(stats, RunSelection{}), "X")) {
    if (e.at("name") != "optimizer" || e.at("args").at("warmup") == true) continue;
    ++optimizers;
    EXPECT_DOUBLE_EQ(e.at("args").at("value_ms").get<double>(), 1.0000005);
    EXPECT_NEAR(e.at("dur").get<double>(), 1000.0, 1e-6);
  }
  EXPECT_EQ(optimizers, 2u);
}

TEST_F(Trace, RunsChosenByThroughputOrByIndex) {
  // single's runs: 2000, 2000, 2000, 1600, 1600, 200 samples/s.
  EXPECT_EQ(select_runs(stats_[0], parse_run_selection("slowest")), std::vector<int>{5});
  EXPECT_EQ(select_runs(stats_[0], parse_run_selection("fastest")), std::vector<int>{2});
  EXPECT_EQ(select_runs(stats_[0], parse_run_selection("median")), std::vector<int>{4});  // lower median: 1600
  EXPECT_EQ(select_runs(stats_[0], parse_run_selection("4,1,4")), (std::vector<int>{1, 4}));
  EXPECT_EQ(select_runs(stats_[0], parse_run_selection("all")).size(), 6u);
  EXPECT_THROW(select_runs(stats_[0], parse_run_selection("6")), UsageError);
  EXPECT_THROW(parse_run_selection("1,x"), UsageError);
  EXPECT_THROW(parse_run_selection(""), UsageError);
  EXPECT_THROW(parse_run_selection("-1"), UsageError);
}

}  // namespace
