// Purpose: the report's tables for a synthetic results file with known per-step values (analysis_fixture.hpp), as the
// terminal shows them, character for character; every number is derived by hand in the comments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <variant>

#include "analysis_fixture.hpp"
#include "report_tables.hpp"
#include "stats/answer.hpp"
#include "stats/compare.hpp"
#include "stats/configuration_stats.hpp"
#include "table.hpp"
#include "timeline.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class ReportTables : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_report_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    add_single(writer);
    add_double(writer);
    writer.close();
    file_ = read_results_file(path_);
    for (const ConfigurationResults& c : file_.configurations)
      stats_.push_back(compute_configuration_stats(c, "synthetic.h5", {}));
  }
  void TearDown() override { fs::remove(path_); }
  std::string path_;
  ResultsFile file_;
  std::vector<ConfigurationStats> stats_;
};

// single: kept runs 2000 2000 2000 1600 1600 (run 5, 200 samples/s, has M = 0.6745·(200 − 1800)/200 = −5.40):
// mean 1840, sd √48000 = 219.09, t(0.975, 4)·219.09/√5 = 272.03, median 2000, CV 11.91%, step 4.4 ms,
// the 16-8-3 model's 5,248 FLOPs / 4.4 ms (0.00 TFLOP/s; test_configuration_stats pins it), 1024 MiB, no clocks (—).
// double: 3200 ×3, 4000 ×2 (MAD 0, none excluded): mean 3520, sd √192000 = 438.18, ± 544.07, median 3200, CV 12.45%,
// step 2.3 ms, 0.00 TFLOP/s per GPU, 3072 MiB, 1 throttled.
const char kExpectedConfigurations[] = R"(Throughput per configuration (samples/s over kept runs; step = max over ranks)
  file          configuration  model   batch  GPUs   runs    samples/s  median   sd   CV %  step ms  TFLOP/s/GPU  MiB/GPU  throttled  complete  math check   replicas
  ------------  -------------  ------  -----  ----  -----  -----------  ------  ---  -----  -------  -----------  -------  ---------  --------  -----------  -----------
  synthetic.h5  single         custom      8     1  5 / 6  1,840 ± 272   2,000  219  11.91   4.4000         0.00    1,024          —  yes       not checked  not checked
  synthetic.h5  double         custom      8     2  5 / 5  3,520 ± 544   3,200  438  12.45   2.3000         0.00    3,072          1  yes       not checked  not checked
  ± is the 95% Student-t interval t(0.975, n-1)·s/√n over the kept runs (none below 5 runs)
  Outliers: runs with |modified z| = |0.6745 (x - median) / MAD| > 3.5 on run throughput are excluded (Iglewicz & Hoaglin; none when MAD = 0); warm-up steps excluded.
  TFLOP/s/GPU = the step's GEMM FLOPs at the local batch B, 2 B (3 W - W0) for W dense weights of which W0 are the first layer's (it has no input gradient), / mean step; MiB/GPU = peak device memory, max over kept runs and ranks; throttled = kept runs with a rank below 75% of its max SM clock (— where clocks were not recorded).
  'synthetic.h5' single: excluded runs 5 (200 samples/s, M -5.40)
)";

// Phases of the critical rank (analysis_fixture.hpp): single 1.2 + 2 + 0 + 0.5 + 0.7 = 4.4 ms (27%, 45%, 0%, 11%,
// 16%); double 0.92 + 0.46 + 0.62 + 0.2 + 0.1 = 2.3 ms, all-reduce 0.56, overlap 100·(1 − 0.62/0.56) = −10.7%.
const char kExpectedPhasesRows[] =
    R"(  synthetic.h5  single         custom      8     1  4.4000  1.2000 (27%)  2.0000 (45%)     0.0000   0.0000 (0%)  0.5000 (11%)  0.7000 (16%)          —
  synthetic.h5  double         custom      8     2  2.3000  0.9200 (40%)  0.4600 (20%)     0.5600  0.6200 (27%)   0.2000 (9%)   0.1000 (4%)        -11
)";

// Speedup 3520/1840 = 1.913, efficiency 0.957; Welch t = 1680/√(38400 + 9600) = 7.67, df = 48000²/(38400²/4 +
// 9600²/4) = 5.88, p = 2.83e-4; Fieller at df 7.984 (t = 2.3068): [1.5985, 2.2862]. The p and the interval were also
// computed independently of Boost, by numerically integrating Student's t density (Python, no libraries).
const char kExpectedScaling[] = R"(Scaling: N GPUs against 1 GPU of the same model, global batch and settings
  model   batch  GPUs  N-GPU configuration  1-GPU samples/s  N-GPU samples/s         speedup [95%]  efficiency        MiB/GPU          step ms  Welch t   df        p
  ------  -----  ----  -------------------  ---------------  ---------------  --------------------  ----------  -------------  ---------------  -------  ---  -------
  custom      8     2  double                   1,840 ± 272      3,520 ± 544  1.913 [1.599, 2.286]       0.957  1,024 → 3,072  4.4000 → 2.3000     7.67  5.9  2.8e-04
  ± is the 95% Student-t interval t(0.975, n-1)·s/√n over the kept runs (none below 5 runs)
  speedup = mean N-GPU / mean 1-GPU throughput; interval: Fieller's interval for a ratio of independent means, Welch-Satterthwaite df at the ratio (Tamhane & Logan 2004), 95%; efficiency = speedup / N.
  Welch: two-sided t-test of N-GPU against 1-GPU run throughputs (Welch-Satterthwaite df).
)";

// The comparison's change is the percent by which after's mean throughput differs from before's: 25 at a ratio of
// 1.25, -20 at 0.8.
TEST_F(ReportTables, ComparisonChangeIsPercentOfTheRatio) {
  for (const double ratio : {1.25, 0.8}) {
    const std::vector<ConfigurationStats> before = {stats_[0]};
    std::vector<ConfigurationStats> after = {stats_[0]};
    after[0].throughput.mean *= ratio;
    // The comparison points into both vectors: they outlive it.
    const stats::Comparison comparison = stats::compare_results(before, after, {});
    const Table table = comparison_table(comparison, {});
    ASSERT_EQ(table.rows.size(), 1u);
    int found = 0;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (table.columns[c].key == "ratio") {
        EXPECT_NEAR(std::get<double>(table.rows[0][c]), ratio, 1e-12);
        ++found;
      }
      if (table.columns[c].key == "change_percent") {
        EXPECT_NEAR(std::get<double>(table.rows[0][c]), 100 * (ratio - 1), 1e-9) << ratio;
        ++found;
      }
    }
    EXPECT_EQ(found, 2);
  }
}

TEST_F(ReportTables, ConfigurationsTableExactly) {
  EXPECT_EQ(render_terminal(configurations_table(stats_, {})), kExpectedConfigurations);
}

// Every count of samples per second groups its thousands, the spread's as much as the mean's and the median's.
TEST_F(ReportTables, ThroughputColumnsGroupThousands) {
  std::vector<ConfigurationStats> wide = {stats_[0]};
  wide[0].throughput.sd = 12345.0;
  wide[0].throughput.median = 23456.0;
  const std::string table = render_terminal(configurations_table(wide, {}));
  EXPECT_NE(table.find("  23,456  12,345  "), std::string::npos) << table;
}

// The math check column says what math_check says, in one word; a configuration whose check failed is named in the
// scaling table's notes and not paired.
TEST_F(ReportTables, MathCheckColumnAndTheUnpairedConfiguration) {
  file_.configurations[0].metadata.math_check =
      "passed: relative error 0.001 on rank 0, the largest of 1 (tolerance "
      "0.05, 3 steps)";
  file_.configurations[1].metadata.math_check =
      "FAILED: relative error 0.3 on rank 1, the largest of 2 (tolerance "
      "0.05, 3 steps)";
  const std::string table = render_terminal(configurations_table(stats_, {}));
  EXPECT_NE(table.find("yes       passed      not checked\n"), std::string::npos) << table;
  EXPECT_NE(table.find("yes       FAILED      not checked\n"), std::string::npos) << table;
  const std::string scaling = render_terminal(scaling_table(compute_answer(stats_)));
  EXPECT_NE(scaling.find("NOT PAIRED: 'synthetic.h5' double: its math check failed (FAILED: relative error 0.3"),
            std::string::npos)
      << scaling;
}

// Two jobs' pairs in one report are trials: one row with both trials, the speedup from the two trial means.
TEST_F(ReportTables, RepeatedPairsGiveATrialsRow) {
  const std::string path = path_ + ".second.h5";
  {
    ResultsWriter writer(path, true);
    add_single(writer, "single_b");
    add_double(writer, "double_b");
    writer.close();
  }
  const ResultsFile second = read_results_file(path);
  std::vector<ConfigurationStats> all = stats_;
  for (const ConfigurationResults& c : second.configurations)
    all.push_back(compute_configuration_stats(c, "second.h5", {}));
  const Answer answer = compute_answer(all);
  const std::string table = render_terminal(scaling_table(answer));
  fs::remove(path);
  // One row for the pair; the same runs twice: both trial means equal, so the speedup is 3520 / 1840 and both its
  // interval and the trial means' have no width.
  EXPECT_NE(table.find("  custom      8     2       2  double                     1,840 ± 0        3,520 ± 0  1.913 "
                       "[1.913, 1.913]"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("double_b"), std::string::npos) << table;
  // Each trial on its own, paired with the other side's trial of its file, in the per-trial table (off
  // screen unless asked for).
  EXPECT_FALSE(per_trial_table(answer, false).on_screen);
  const std::string trials = render_terminal(per_trial_table(answer, true));
  EXPECT_NE(trials.find("  custom      8     2      1  single               double"), std::string::npos) << trials;
  EXPECT_NE(trials.find("  custom      8     2      2  single_b             double_b"), std::string::npos) << trials;
  // The verdict's conclusion ends the row, as mgpu_bench says it.
  EXPECT_NE(table.find("adding a GPU speeds this step up\n"), std::string::npos) << table;
  // Equal trial means leave nothing between trials; within, the runs' own spread (two decimals, in percent).
  EXPECT_NE(table.find("1.913 [1.913, 1.913]       0.957                0.00   11.91                0.00   12.45"),
            std::string::npos)
      << table;
}

// The ceiling's columns appear when any pair has its local batch measured, each its interval in brackets, and are
// empty for the pairs without one; their definition is the table's note.
TEST(ReportTablesCeiling, ColumnsWhereTheLocalBatchWasMeasured) {
  const std::string path =
      (fs::temp_directory_path() / ("mgpu_ceiling_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    add_sweep_point(writer, 16, 1.0, 0.9);
    add_sweep_point(writer, 32, 1.6, 1.25);
    writer.close();
  }
  const ResultsFile file = read_results_file(path);
  fs::remove(path);
  std::vector<ConfigurationStats> stats;
  for (const ConfigurationResults& c : file.configurations) stats.push_back(compute_configuration_stats(c, path, {}));
  const Table table = scaling_table(compute_answer(stats));
  const std::string csv = render_csv(table);
  EXPECT_NE(csv.find(",ceiling,ceiling_low,ceiling_high,ceiling_fraction,ceiling_fraction_low,ceiling_fraction_high,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",0.5555555555555556,,,,,,,"), std::string::npos) << csv;  // the pair at 16: none
  const std::string screen = render_terminal(table);
  EXPECT_NE(screen.find("1.600 [1.5"), std::string::npos) << screen;
  EXPECT_NE(screen.find("0.800 [0.7"), std::string::npos) << screen;
  EXPECT_NE(screen.find("ceiling [95%]"), std::string::npos) << screen;
  EXPECT_NE(screen.find("of ceiling [95%]"), std::string::npos) << screen;
  EXPECT_NE(screen.find("ceiling = N x 1-GPU samples/s at the local batch"), std::string::npos) << screen;
}

// The replicas column says what replica_check says, in one word; a configuration whose replicas differed is named in
// the scaling table's notes and not paired.
TEST_F(ReportTables, ReplicasColumnAndTheUnpairedConfiguration) {
  file_.configurations[0].progress.replica_check = "1 rank: nothing to compare";
  file_.configurations[1].progress.replica_check = "identical on 2 ranks (FNV-1a 64 of 5 parameters: 0x1)";
  std::string table = render_terminal(configurations_table(stats_, {}));
  EXPECT_NE(table.find("yes       not checked  1 rank\n"), std::string::npos) << table;
  EXPECT_NE(table.find("yes       not checked  identical\n"), std::string::npos) << table;
  file_.configurations[1].progress.replica_check =
      "rank 1's parameters differ from rank 0's (FNV-1a 64 0x2 against 0x1)";
  table = render_terminal(configurations_table(stats_, {}));
  EXPECT_NE(table.find("yes       not checked  DIFFER\n"), std::string::npos) << table;
  const std::string scaling = render_terminal(scaling_table(compute_answer(stats_)));
  EXPECT_NE(scaling.find("NOT PAIRED: 'synthetic.h5' double: the ranks' parameters differed after its runs (rank 1's "
                         "parameters differ from rank 0's (FNV-1a 64 0x2 against 0x1))"),
            std::string::npos)
      << scaling;
}

// Every run of each configuration with its modified z and whether it was kept. single: median 1800, MAD 200, so
// M = 0.6745·(x − 1800)/200 = ±0.67 and −5.40 for run 5 (excluded); double: MAD 0, every M 0 and every run kept.
const char kExpectedRuns[] = R"(Runs (throughput over the counted steps; step = max over ranks)
  file          configuration  model   batch  GPUs  run  samples/s      M  kept
  ------------  -------------  ------  -----  ----  ---  ---------  -----  ----
  synthetic.h5  single         custom      8     1    0      2,000   0.67  yes
  synthetic.h5  single         custom      8     1    1      2,000   0.67  yes
  synthetic.h5  single         custom      8     1    2      2,000   0.67  yes
  synthetic.h5  single         custom      8     1    3      1,600  -0.67  yes
  synthetic.h5  single         custom      8     1    4      1,600  -0.67  yes
  synthetic.h5  single         custom      8     1    5        200  -5.40  no
  synthetic.h5  double         custom      8     2    0      3,200   0.00  yes
  synthetic.h5  double         custom      8     2    1      3,200   0.00  yes
  synthetic.h5  double         custom      8     2    2      3,200   0.00  yes
  synthetic.h5  double         custom      8     2    3      4,000   0.00  yes
  synthetic.h5  double         custom      8     2    4      4,000   0.00  yes
)";

TEST_F(ReportTables, RunsTableExactly) { EXPECT_EQ(render_terminal(runs_table(stats_)), kExpectedRuns); }

// With --timing interleaved the table lists the throughput runs by their index in the file (the marked runs 4 and 6
// are left to the phases), so it joins with the file's datasets.
TEST(ReportTablesRuns, ThroughputRunsByTheirIndexInTheFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mgpu_runs_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    add_interleaved(writer, "kinds");
    writer.close();
  }
  const ResultsFile file = read_results_file(path);
  std::filesystem::remove(path);
  const Table table = runs_table({stats::compute_configuration_stats(file.configuration("kinds"), path, {})});
  std::vector<std::int64_t> runs;
  for (const auto& row : table.rows) runs.push_back(std::get<std::int64_t>(row.at(5)));
  EXPECT_EQ(runs, (std::vector<std::int64_t>{0, 1, 2, 3, 5}));
}

TEST_F(ReportTables, PhasesTableRowsExactly) {
  const std::string text = render_terminal(phases_table(stats_));
  EXPECT_NE(text.find(kExpectedPhasesRows), std::string::npos) << text;
}

TEST_F(ReportTables, ScalingTableExactly) {
  const Answer answer = compute_answer(stats_);
  const ScalingTable& scaling = answer.scaling;
  ASSERT_EQ(scaling.pairs.size(), 1u);
  EXPECT_NEAR(scaling.pairs[0].welch.p, 2.8291615e-4, 1e-10);
  EXPECT_NEAR(scaling.pairs[0].speedup.low, 1.59854074, 1e-7);
  EXPECT_NEAR(scaling.pairs[0].speedup.high, 2.28616164, 1e-7);
  // A file of one trial per configuration gives the table it always gave.
  EXPECT_EQ(render_terminal(scaling_table(answer)), kExpectedScaling);
}

TEST_F(ReportTables, TimelineBarsSitWhereThePhasesHappen) {
  // 40 characters for the longest step (4.4 ms): 0.11 ms each. single: forward 1.2 ms = 11 characters from 0,
  // backward 2 ms = 18 from 11; double: the all-reduce (0.56 ms, 5) starts where backward ends (1.38 ms, column 13).
  const std::string text = render_timeline(stats_, 40);
  EXPECT_NE(text.find("    forward      |███████████                             |   1.2000 ms  27.3%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    backward     |           ██████████████████           |   2.0000 ms  45.5%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    allreduce    |             █████                      |   0.5600 ms  24.3%"),
            std::string::npos)
      << text;
}

// A phase shorter than half a character that starts in the frame's last column still shows, as one mark in that
// column: single's "other" cut to 0.02 ms (0.18 of a character) after 4.38 ms (column 39.8).
TEST_F(ReportTables, TimelineShowsAThinLastPhaseInTheLastColumn) {
  ConfigurationStats thin = stats_[0];
  thin.phase_ms[static_cast<int>(BreakdownPhase::optimizer)] = 1.18;
  thin.phase_ms[static_cast<int>(BreakdownPhase::other)] = 0.02;
  const std::string text = render_timeline({thin}, 40);
  EXPECT_NE(text.find("    other        |" + std::string(39, ' ') + "█|   0.0200 ms   0.5%"), std::string::npos)
      << text;
}

// The overlap column divides by the all-reduce time: where a multi-GPU configuration's is exactly zero it shows no
// value, never an infinity or NaN; a 1-GPU one has none either.
TEST_F(ReportTables, OverlapOfAZeroAllReduceIsNotShown) {
  ConfigurationStats zero = stats_[1];
  ASSERT_GT(zero.results->ranks(), 1);
  zero.phase_ms[static_cast<int>(BreakdownPhase::allreduce)] = 0.0;
  const Table table = phases_table({stats_[0], zero, stats_[1]});
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows[0].back())) << "1 GPU";
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows[1].back())) << "all-reduce of exactly 0 ms";
  ASSERT_TRUE(std::holds_alternative<double>(table.rows[2].back()));
  EXPECT_NEAR(std::get<double>(table.rows[2].back()), 100 * (1 - 0.62 / 0.56), 1e-9);
}

TEST_F(ReportTables, TimelineKeepsTheSignOfANegativeOther) {
  // Phases that ran at the same time add up to more than the step: "other" is negative. Its bar is empty, its value
  // and share keep their sign (double: step 2.3 ms, other -0.3 ms = -13.0%), and a line says why.
  ConfigurationStats overlapped = stats_[1];
  overlapped.phase_ms[static_cast<int>(BreakdownPhase::other)] = -0.3;
  const std::string text = render_timeline({overlapped}, 40);
  EXPECT_NE(text.find("    other        |                                        |  -0.3000 ms -13.0%"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("other < 0: phases overlapped one another"), std::string::npos) << text;
  EXPECT_EQ(render_timeline(stats_, 40).find("other < 0"), std::string::npos);
}

TEST(ReportTablesStepOnly, PhasesNotMeasuredShowAsDashesAndNoTimelineBars) {
  // A --timing step file: the phase columns show "—" (not "nan"), the timeline says why it draws no bars, and the
  // step itself is reported as usual.
  const std::string path =
      (fs::temp_directory_path() / ("mgpu_report_step_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    add_step_only(writer);
    writer.close();
  }
  const ResultsFile file = read_results_file(path);
  std::vector<ConfigurationStats> stats;
  for (const ConfigurationResults& c : file.configurations) stats.push_back(compute_configuration_stats(c, "s.h5", {}));
  fs::remove(path);
  const std::string phases = render_terminal(phases_table(stats));
  EXPECT_EQ(phases.find("nan"), std::string::npos) << phases;
  EXPECT_NE(phases.find("4.0000"), std::string::npos) << phases;
  const std::string timeline = render_timeline(stats, 40);
  EXPECT_NE(timeline.find("step 4.0000 ms"), std::string::npos) << timeline;
  EXPECT_NE(timeline.find("phases not measured, only the step (mgpu_bench, timing step)"), std::string::npos)
      << timeline;
  EXPECT_EQ(timeline.find("█"), std::string::npos) << timeline;
  EXPECT_EQ(timeline.find("nan"), std::string::npos) << timeline;
}

}  // namespace
