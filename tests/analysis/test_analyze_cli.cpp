// Purpose: end-to-end tests of the mgpu_analyze binary: the report and compare of a synthetic results file in every
// format, read back; plots written with gnuplot, and tables still written without it; every bad input (a file that
// does not exist, is empty, is not HDF5, lacks a dataset or has a newer schema_version; bad options) exits non-zero
// with one line naming the file and the problem; a missing 1-GPU baseline is a note (an error with
// --require-baseline); the break-even of a sweep in every format. predict: its tables, JSON and plot files on the
// synthetic probe of tests/predict/step_cost_fixture.hpp, and each bad value refused by name.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "analysis_fixture.hpp"
#include "platform/hdf5_check.hpp"
#include "predict/step_cost_fixture.hpp"
#include "results/hdf5_handles.hpp"
#include "results/results_schema.hpp"
#include "stats/speedup_verdict.hpp"
#include "stats/statistics.hpp"
#include "stats/verdict.hpp"
#include "table_parsers.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis_test;

namespace {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_analyze_cli_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    good_ = dir_ + "/good.h5";
    ResultsWriter writer(good_, false);
    add_single(writer);
    add_double(writer);
    writer.close();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `[prefix] mgpu_analyze args` in the temporary directory, stdout and stderr captured separately.
  Outcome run(const std::string& args, const std::string& prefix = "") const {
    const std::string command = "cd '" + dir_ + "' && " + prefix + " '" + MGPU_ANALYZE_BINARY + "' " + args + " > '" +
                                dir_ + "/stdout.txt' 2> '" + dir_ + "/stderr.txt'";
    const int status = std::system(command.c_str());
    Outcome outcome;
    outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    outcome.out = read_text(dir_ + "/stdout.txt");
    outcome.err = read_text(dir_ + "/stderr.txt");
    return outcome;
  }

  // A results file with one configuration ("double" or "single") only.
  std::string file_with(const std::string& name, bool single) const {
    const std::string path = dir_ + "/" + name;
    ResultsWriter writer(path, false);
    if (single)
      add_single(writer);
    else
      add_double(writer);
    writer.close();
    return path;
  }

  // A results file of one configuration per metadata, each of two runs whose measured steps all have these phases.
  void file_of_steady_runs(const std::string& name, const std::vector<ConfigurationMetadata>& configurations,
                           const std::vector<double>& phases) const {
    ResultsWriter writer(dir_ + "/" + name, false);
    for (const ConfigurationMetadata& metadata : configurations) add_steady(writer, metadata, phases, 2);
  }

  std::string dir_, good_;
};

// Exit status 1 (or the one given), nothing on stdout, exactly one line on stderr, naming every needle.
void expect_rejected(const Outcome& outcome, const std::vector<std::string>& needles, int exit_code = 1) {
  EXPECT_EQ(outcome.exit_code, exit_code) << outcome.err;
  const std::vector<std::string> lines = lines_of(outcome.err);
  ASSERT_EQ(lines.size(), 1u) << "stderr:\n" << outcome.err;
  EXPECT_EQ(lines[0].rfind("mgpu_analyze: error: ", 0), 0u) << lines[0];
  for (const std::string& needle : needles) EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
}

TEST_F(AnalyzeCli, ReportInTheTerminal) {
  const Outcome o = run("report good.h5");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  for (const char* part : {"Throughput per configuration", "Mean step and its phases", "Scaling: N GPUs",
                           "1.913 [1.599, 2.286]", "Timeline of the mean step", "Fieller"})
    EXPECT_NE(o.out.find(part), std::string::npos) << part;
}

TEST_F(AnalyzeCli, JsonReportReadsBack) {
  const Outcome o = run("report good.h5 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json json = nlohmann::json::parse(o.out);
  EXPECT_EQ(json.at("settings").at("outlier_threshold"), 3.5);
  // The verdict's band, for scripts that judge by the answer's rule (bench/report_json.py): the constant itself.
  EXPECT_EQ(json.at("settings").at("min_effect").get<double>(), stats::kMinimumEffect);
  EXPECT_NE(json.at("settings").at("ratio_interval_method").get<std::string>().find("Fieller"), std::string::npos);
  const nlohmann::json& rows = json.at("tables").at("configurations").at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("configuration"), "single");
  EXPECT_EQ(rows[0].at("runs_kept"), 5);
  EXPECT_DOUBLE_EQ(rows[0].at("samples_per_s_mean").get<double>(), 1840);
  const nlohmann::json& scaling = json.at("tables").at("scaling").at("rows");
  ASSERT_EQ(scaling.size(), 1u);
  EXPECT_NEAR(scaling[0].at("speedup").get<double>(), 3520.0 / 1840.0, 1e-12);
  EXPECT_NEAR(scaling[0].at("welch_p").get<double>(), 2.8291615e-4, 1e-10);
  const nlohmann::json& runs = json.at("tables").at("runs").at("rows");
  ASSERT_EQ(runs.size(), 11u);
  EXPECT_NEAR(runs[5].at("modified_z").get<double>(), -5.396, 1e-9);
  EXPECT_EQ(runs[5].at("kept"), "no");
}

TEST_F(AnalyzeCli, CsvReportReadsBack) {
  const Outcome o = run("report good.h5 --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // Tables are separated by a blank line, each preceded by "# title".
  const Rows rows = parse_csv(o.out);
  std::vector<Rows> tables(1);
  for (const auto& row : rows) {
    if (row.size() == 1 && row[0].empty()) {
      tables.emplace_back();
    } else if (row[0].rfind("# ", 0) != 0) {
      tables.back().push_back(row);
    }
  }
  // configurations, phases, scaling, runs: one batch is no sweep, so no break-even (as mgpu_bench's verdict).
  ASSERT_EQ(tables.size(), 4u);
  const Rows& configurations = tables[0];
  ASSERT_EQ(configurations.size(), 3u);
  EXPECT_EQ(configurations[0][0], "file");
  const auto column = [&](const Rows& t, const std::string& key) {
    return std::find(t[0].begin(), t[0].end(), key) - t[0].begin();
  };
  EXPECT_EQ(configurations[1][column(configurations, "configuration")], "single");
  EXPECT_EQ(std::stod(configurations[2][column(configurations, "samples_per_s_mean")]), 3520);
  EXPECT_EQ(configurations[1][column(configurations, "throttled_runs")], "");  // no clocks recorded
  EXPECT_EQ(std::stod(tables[2][1][column(tables[2], "efficiency")]), 3520.0 / 1840.0 / 2);
  const Rows& runs = tables[3];
  ASSERT_EQ(runs.size(), 12u);  // header + 6 + 5 runs
  EXPECT_EQ(runs[6][column(runs, "run")], "5");
  EXPECT_EQ(std::stod(runs[6][column(runs, "samples_per_s")]), 200);
  EXPECT_EQ(runs[6][column(runs, "kept")], "no");
}

TEST_F(AnalyzeCli, MarkdownReportReadsBack) {
  const Outcome o = run("report good.h5 --format markdown");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Rows rows = parse_markdown_tables(o.out);
  // Header + 2 rows (configurations), header + 2 (phases), header + 1 (scaling).
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[1][1], "single");
  EXPECT_EQ(rows[1][6], "1,840 ± 272");
  EXPECT_EQ(rows[7][6], "1.913 [1.599, 2.286]");
  EXPECT_NE(o.out.find("```"), std::string::npos);     // the timeline, as a code block
  EXPECT_EQ(o.out.find("Runs ("), std::string::npos);  // per-run data only in CSV and JSON
}

// The palette has ten colours; an eleventh curve takes the first again (curve i takes colour i modulo ten).
TEST_F(AnalyzeCli, AnEleventhCurveTakesTheFirstColourAgain) {
  std::vector<ConfigurationMetadata> curves;
  for (int i = 0; i < 11; ++i) {
    curves.push_back(synthetic_metadata("m" + std::to_string(i), 1));
    curves.back().configuration.training.model.widths = {16, 8 + i, 3};  // a custom model per width: a curve of its own
  }
  file_of_steady_runs("eleven.h5", curves, {1.0, 2.0, 0.0, 0.0, 0.5, 4.0});
  const Outcome o = run("report eleven.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string script = read_text(dir_ + "/plots/throughput_vs_batch.gp");
  const auto count = [&](const std::string& colour) {
    std::size_t n = 0;
    for (std::size_t at = script.find(colour); at != std::string::npos; at = script.find(colour, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("lc rgb '#4e79a7'"), 2u) << script;  // curves 0 and 10
  EXPECT_EQ(count("lc rgb '#bab0ac'"), 1u) << script;  // curve 9, the palette's last
}

// The throughput axis's tics span the measured values only: a configuration under 1 sample/s (batch 1 in 4 s steps,
// 0.25 samples/s) gets the single tic 0.2, not tics up to 1.
TEST_F(AnalyzeCli, ThroughputTicsBelowOneSamplePerSecond) {
  file_of_steady_runs("slow.h5", {synthetic_metadata("slow", 1, 1)}, {1000.0, 2000.0, 0.0, 0.0, 500.0, 4000.0});
  const Outcome o = run("report slow.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string script = read_text(dir_ + "/plots/throughput_vs_batch.gp");
  EXPECT_NE(script.find("set ytics (\"0.2\" 0.2)\n"), std::string::npos) << script;
}

// Throughputs spanning seven decades get the 1, 2, 5 tics of every decade between them, each labelled in its unit.
TEST_F(AnalyzeCli, ThroughputTicsOverSeveralDecades) {
  ResultsWriter writer(dir_ + "/wide.h5", false);
  add_steady(writer, synthetic_metadata("slow", 1, 1), {1000.0, 2000.0, 0.0, 0.0, 500.0, 4000.0}, 2);
  add_steady(writer, synthetic_metadata("fast", 1, 4096), {0.2, 0.5, 0.0, 0.0, 0.1, 1.0}, 2);
  writer.close();
  const Outcome o = run("report wide.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string script = read_text(dir_ + "/plots/throughput_vs_batch.gp");
  for (const char* tic : {"\"0.2\" 0.2", "\"1\" 1,", "\"50\" 50,", "\"1k\" 1000,", "\"20k\" 20000,", "\"1M\" 1000000,",
                          "\"5M\" 5000000)"})
    EXPECT_NE(script.find(tic), std::string::npos) << tic << "\n" << script;
}

// With a third GPU count the efficiency plot is drawn, the same size as the other line plots: speedup / N per count,
// here 1 / N (every configuration's step is the same at the same global batch), each count's interval an error bar
// (a few GPU counts are points, not a continuum to shade).
TEST_F(AnalyzeCli, EfficiencyPlotWithThreeGpuCounts) {
  file_of_steady_runs("three.h5",
                      {synthetic_metadata("one", 1), synthetic_metadata("two", 2), synthetic_metadata("four", 4)},
                      {1.0, 2.0, 0.0, 0.0, 0.5, 4.0});
  const Outcome o = run("report three.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string script = read_text(dir_ + "/plots/efficiency_vs_gpus.gp");
  EXPECT_NE(script.find("set terminal pngcairo size 1000,640 "), std::string::npos) << script;
  EXPECT_NE(script.find("set terminal svg size 1000,640 "), std::string::npos) << script;
  EXPECT_NE(script.find("efficiency_vs_gpus.dat\" index 0 using 1:2:3:4 with yerrorlines "), std::string::npos)
      << script;
  EXPECT_EQ(script.find("filledcurves"), std::string::npos) << script;
  const std::string data = read_text(dir_ + "/plots/efficiency_vs_gpus.dat");
  EXPECT_NE(data.find("\n2 0.5 "), std::string::npos) << data;
  EXPECT_NE(data.find("\n4 0.25 "), std::string::npos) << data;
  // Each error bar is the speedup's interval over N too (here degenerate: the steps are all equal).
  EXPECT_NE(data.find("\n2 0.5 0.5 0.5\n4 0.25 0.25 0.25\n"), std::string::npos) << data;
}

// Trials that disagree at run level (0.99 and 1.02, each with a narrow run interval) give one answer in every output,
// mgpu_bench's verdict word for word: one scaling row, one sentence on the page, the same conclusion in JSON.
TEST_F(AnalyzeCli, TrialsGiveOneAnswerEverywhere) {
  const std::string path = dir_ + "/trials.h5";
  {
    ResultsWriter writer(path, false);
    add_disagreeing_trials(writer);
    writer.close();
  }
  std::string sentence;
  for (const std::string& line : stats::verdict_lines(read_results_file(path), 2))
    if (line.rfind("    ", 0) == 0) {
      EXPECT_TRUE(sentence.empty()) << "a second sentence: " << line;
      sentence = line.substr(4);
    }
  ASSERT_NE(sentence.find("no significant difference from 1 GPU"), std::string::npos) << sentence;
  const Outcome text = run("report trials.h5 --out rep");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // The scaling table: one row for the pair, its verdict the sentence's conclusion; no per-trial rows on screen.
  const std::size_t scaling = text.out.find("Scaling: N GPUs against 1 GPU");
  ASSERT_NE(scaling, std::string::npos) << text.out;
  const std::string table = text.out.substr(scaling, text.out.find("\n\n", scaling) - scaling);
  EXPECT_EQ(lines_of(table).size(), 3u + 1u + 4u) << table;  // title, header, rule, one row, four notes
  EXPECT_NE(table.find(sentence.substr(sentence.rfind(": ") + 2)), std::string::npos) << table;
  EXPECT_EQ(text.out.find("Per trial"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("not used"), std::string::npos) << text.out;
  const std::string html = read_text(dir_ + "/rep/report.html");
  const std::string shown = "<b class=\"sentence\">" + sentence + "</b>";
  EXPECT_NE(html.find(shown), std::string::npos) << html;
  EXPECT_EQ(html.find("<b class=\"sentence\">", html.find(shown) + 1), std::string::npos) << "more than one sentence";
  const nlohmann::json json = nlohmann::json::parse(run("report trials.h5 --format json").out);
  const nlohmann::json& rows = json.at("tables").at("scaling").at("rows");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("trials"), 2);
  EXPECT_EQ(rows[0].at("verdict"), sentence.substr(sentence.rfind(": ") + 2));
  // Each trial on its own only in the per-trial table, paired with the other side's trial of its file.
  const nlohmann::json& trials = json.at("tables").at("per_trial").at("rows");
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[1].at("single_configuration"), "b8_n1_t2");
  EXPECT_EQ(trials[1].at("configuration"), "b8_n2_t2");
  EXPECT_NE(run("report trials.h5 --per-trial").out.find("Per trial"), std::string::npos);
}

TEST_F(AnalyzeCli, OutDirectoryWithPlots) {
  const Outcome o = run("report good.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* file : {"report.csv", "configurations.csv", "phases.csv", "scaling.csv", "runs.csv",
                           "throughput_vs_batch.gp", "throughput_vs_batch.dat", "speedup_vs_batch.gp", "phases.gp"})
    EXPECT_TRUE(fs::exists(dir_ + "/plots/" + file)) << file;
  // Two GPU counts only (1 and 2): no efficiency plot.
  EXPECT_FALSE(fs::exists(dir_ + "/plots/efficiency_vs_gpus.gp"));
  // The phase bars are each configuration's own step in percent: single's 4.4 ms step is forward 1.2 (27.27%),
  // backward 2 (to 72.73%), exposed_comm 0, optimizer 0.5 (to 84.09%), other 0.7 (to 100%).
  const std::string phases = read_text(dir_ + "/plots/phases.dat");
  EXPECT_NE(phases.find("0 \"single\" 0 27.27272727 72.72727273 72.72727273 84.09090909 100 \"4.4 ms, 1 GPU\""),
            std::string::npos)
      << phases;
  // Phase j's bar spans the data's columns 3 + j to 4 + j (from one boundary to the next), the label is column 9.
  const std::string script = read_text(dir_ + "/plots/phases.gp");
  for (int j = 0; j < 5; ++j) {
    const std::string from = std::to_string(3 + j), to = std::to_string(4 + j);
    EXPECT_NE(script.find("using (($" + from + "+$" + to + ")/2):1:" + from + ":" + to + ":"), std::string::npos)
        << "phase " << j << ":\n"
        << script;
  }
  EXPECT_NE(script.find("using (101.5):1:9 with labels"), std::string::npos) << script;
  // Bar k sits at y = k: the range reaches 0.6 past the last one and before the first, so no bar is cut.
  std::size_t bars = 0;
  std::size_t longest = 10;  // the margin's floor, in characters
  std::istringstream rows(phases);
  for (std::string row; std::getline(rows, row);) {
    if (row.empty() || row[0] == '#') continue;
    ++bars;
    const std::size_t open = row.find('"');
    longest = std::max(longest, row.find('"', open + 1) - open - 1);  // the bar's label, ASCII here
  }
  // Every label fits left of the bars: the margin is the longest label and 3 characters more.
  EXPECT_NE(script.find("set lmargin " + std::to_string(longest + 3) + "\n"), std::string::npos) << script;
  EXPECT_NE(script.find("set yrange [" + std::to_string(bars - 1) + ".6:-0.6]"), std::string::npos)
      << bars << " bars:\n"
      << script;
  // The line plots are 1000 x 640 pixels (and the SVG the same size).
  for (const char* plot : {"throughput_vs_batch.gp", "speedup_vs_batch.gp"}) {
    const std::string line_plot = read_text(dir_ + "/plots/" + plot);
    EXPECT_NE(line_plot.find("set terminal pngcairo size 1000,640 "), std::string::npos) << line_plot;
    EXPECT_NE(line_plot.find("set terminal svg size 1000,640 "), std::string::npos) << line_plot;
  }
  if (o.err.find("gnuplot not found") == std::string::npos) {
    for (const char* image : {"throughput_vs_batch.png", "speedup_vs_batch.png", "phases.png"}) {
      ASSERT_TRUE(fs::exists(dir_ + "/plots/" + image)) << image;
      std::ifstream png(dir_ + "/plots/" + image, std::ios::binary);
      char magic[4] = {};
      png.read(magic, 4);
      EXPECT_EQ(std::string(magic + 1, 3), "PNG") << image;
    }
    for (const char* image : {"throughput_vs_batch.svg", "speedup_vs_batch.svg", "phases.svg"})
      EXPECT_NE(read_text(dir_ + "/plots/" + image).find("<svg"), std::string::npos) << image;
    // report.html inlines every plot.
    const std::string page = read_text(dir_ + "/plots/report.html");
    std::size_t inlined = 0;
    for (std::size_t at = page.find("src=\"data:image/svg+xml;base64,"); at != std::string::npos;
         at = page.find("src=\"data:image/svg+xml;base64,", at + 1))
      ++inlined;
    EXPECT_EQ(inlined, 3u);
  }
}

// A configuration whose phases were not measured (--timing step) has no phase bars: every boundary at 0, and the text
// beside it says why.
TEST_F(AnalyzeCli, PhaseBarsOfAStepWithoutMeasuredPhasesAreEmpty) {
  const double nan = std::nan("");
  file_of_steady_runs("unmarked.h5", {synthetic_metadata("unmarked", 1)}, {nan, nan, nan, nan, nan, 4.0});
  const Outcome o = run("report unmarked.h5 --out plots --format csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string phases = read_text(dir_ + "/plots/phases.dat");
  EXPECT_NE(phases.find("0 \"unmarked\" 0 0 0 0 0 0 \"4 ms, 1 GPU (phases not measured)\""), std::string::npos)
      << phases;
}

TEST_F(AnalyzeCli, EfficiencyPlotWithMoreThanTwoGpuCounts) {
  {
    ResultsWriter writer(dir_ + "/sweep.h5", false);
    add_crossing_sweep(writer);
    writer.close();
    ResultsWriter four(dir_ + "/four.h5", false);
    add_sweep_point(four, 8, 1.0, 0.5, 4);  // speedup 2 on 4 GPUs: efficiency 0.5
    four.close();
  }
  ASSERT_EQ(run("report sweep.h5 four.h5 --out plots").exit_code, 0);
  const std::string data = read_text(dir_ + "/plots/efficiency_vs_gpus.dat");
  // The batch-8 curve: 1 GPU at 1, 2 GPUs at 0.5 / 2, 4 GPUs at 2 / 4 (intervals after each).
  EXPECT_NE(data.find("# custom batch 8\n1 1 1 1\n2 0.25 "), std::string::npos) << data;
  EXPECT_NE(data.find("\n4 0.5 "), std::string::npos) << data;
  // The error bars: the speedup's Fieller interval over N, both ends (2 GPUs: [0.4943, 0.5058] / 2).
  EXPECT_NE(data.find("\n2 0.25 0.2471338203 0.2528994208\n4 0.5 0.4942676406 0.5057988415\n"), std::string::npos)
      << data;
  // Two blank lines end each curve's block, the first's too: gnuplot's `index` counts blocks so.
  EXPECT_NE(data.find("0.5057988415\n\n\n# custom batch 32\n1 1 1 1\n"), std::string::npos) << data;
}

TEST_F(AnalyzeCli, WithoutGnuplotSaysSoOnceAndStillWritesTables) {
  const Outcome o = run("report good.h5 --out plots", "/usr/bin/env PATH=/nonexistent");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> lines = lines_of(o.err);
  ASSERT_EQ(lines.size(), 1u) << o.err;
  EXPECT_NE(lines[0].find("gnuplot not found"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ + "/plots/report.txt"));
  EXPECT_TRUE(fs::exists(dir_ + "/plots/phases.gp"));
  EXPECT_FALSE(fs::exists(dir_ + "/plots/phases.png"));
  // The page is still written, saying why it has no plots.
  EXPECT_NE(read_text(dir_ + "/plots/report.html").find("gnuplot was not found"), std::string::npos);
}

TEST_F(AnalyzeCli, NoBaselineIsANoteWithTheCommandThatMeasuresIt) {
  file_with("two_only.h5", false);
  const Outcome o = run("report two_only.h5");
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  EXPECT_NE(o.out.find("Throughput per configuration"), std::string::npos);
  EXPECT_NE(o.out.find("NO 1-GPU BASELINE: 'two_only.h5' double (2 GPUs) has no 1-GPU baseline"), std::string::npos)
      << o.out;
  // The command that reproduces it (config/reproducing_command.hpp): the fixture's step ran without a graph and timed
  // every phase, neither of which is mgpu_bench's default on GPUs.
  EXPECT_NE(o.out.find("mpirun -np 1 mgpu_bench --layers 16,8,3 --batch 8 --gpus 1 --graph off --timing events "
                       "--warmup 1 --steps 2 --runs 5"),
            std::string::npos)
      << o.out;
  // Scripts that need every speedup ask for the error: the full report, then one line per configuration, status 3.
  const Outcome required = run("report two_only.h5 --require-baseline");
  expect_rejected(required, {"'two_only.h5'", "double", "no 1-GPU baseline", "--gpus 1 "}, 3);
  EXPECT_NE(required.out.find("NO 1-GPU BASELINE"), std::string::npos);
  EXPECT_EQ(run("report good.h5 --require-baseline").exit_code, 0);
  file_with("one_only.h5", true);
  EXPECT_EQ(run("report one_only.h5 --require-baseline").exit_code, 0);  // nothing to scale: no error
}

TEST_F(AnalyzeCli, BreakEvenOfASweepInEveryFormat) {
  {
    ResultsWriter writer(dir_ + "/sweep.h5", false);
    add_crossing_sweep(writer);
    writer.close();
  }
  const Outcome o = run("report sweep.h5");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("Break-even: where N GPUs start (or stop) being faster than 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("break-even at global batch ~59 ["), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("faster from 128 to 512 (1.25 to 2), up to the largest batch measured"), std::string::npos)
      << o.out;
  const nlohmann::json json = nlohmann::json::parse(run("report sweep.h5 --format json").out);
  const nlohmann::json& row = json.at("tables").at("break_even").at("rows").at(0);
  EXPECT_NEAR(row.at("break_even_batch").get<double>(), kSweepBreakEven, 1e-4);
  EXPECT_LT(row.at("break_even_low").get<double>(), kSweepBreakEven);
  EXPECT_GT(row.at("break_even_high").get<double>(), kSweepBreakEven);
  EXPECT_EQ(row.at("break_even_low_open"), "no");
  EXPECT_EQ(row.at("kind"), "rising");
  EXPECT_EQ(row.at("crossings"), 1);
  EXPECT_EQ(row.at("before_batch"), 32);
  EXPECT_EQ(row.at("after_batch"), 128);
  EXPECT_EQ(row.at("faster_from_batch"), 128);
  EXPECT_EQ(row.at("no_clear_difference"), "none");
  const nlohmann::json& crossing = json.at("tables").at("break_even_crossings").at("rows").at(0);
  EXPECT_EQ(crossing.at("direction"), "rising");
  EXPECT_EQ(crossing.at("low"), row.at("break_even_low"));
  EXPECT_TRUE(json.at("tables").at("no_clear_difference").at("rows").empty());
  // The answer's own lines, by pair and curve: what mgpu_bench's verdict prints.
  const nlohmann::json& answer = json.at("answer");
  EXPECT_EQ(answer.at("pairs").size(), 4u);
  EXPECT_EQ(answer.at("pairs").at(0).at("lines").size(), 2u);
  EXPECT_EQ(answer.at("break_evens").at(0).at("line").get<std::string>().rfind("  break-even, 16-8-3 on 2 GPUs: ", 0),
            0u);
  EXPECT_EQ(answer.at("lines").back(), answer.at("break_evens").at(0).at("line"));
  // Each pair's verdict in the break-even's words (speedups 0.5 and 2 at the ends of the sweep).
  EXPECT_EQ(answer.at("pairs").at(0).at("verdict"), "slower");
  EXPECT_EQ(answer.at("pairs").at(3).at("verdict"), "faster");
  // Where the file comes from, for a page that cites it.
  const nlohmann::json& provenance = json.at("provenance").at(0);
  EXPECT_NE(provenance.at("file").get<std::string>().find("sweep.h5"), std::string::npos);
  EXPECT_EQ(provenance.at("producer"), "mgpu_bench");
  EXPECT_FALSE(provenance.at("created_utc").get<std::string>().empty());
  EXPECT_EQ(provenance.at("command_lines").size(), 1u);  // every configuration written by one job
  ASSERT_EQ(run("report sweep.h5 --out csv --format csv").exit_code, 0);
  ASSERT_TRUE(fs::exists(dir_ + "/csv/break_even.csv"));
  ASSERT_TRUE(fs::exists(dir_ + "/csv/break_even_crossings.csv"));
  ASSERT_TRUE(fs::exists(dir_ + "/csv/no_clear_difference.csv"));
  const Rows break_even = parse_csv(read_text(dir_ + "/csv/break_even.csv"));
  ASSERT_EQ(break_even.size(), 2u);
  const auto column = std::find(break_even[0].begin(), break_even[0].end(), "faster_from_batch");
  ASSERT_NE(column, break_even[0].end());
  EXPECT_EQ(break_even[1][column - break_even[0].begin()], "128");
  const std::string markdown = run("report sweep.h5 --format markdown").out;
  EXPECT_NE(markdown.find("### Break-even: where N GPUs start"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| 16-8-3 | 2 | 16-8-3 on 2 GPUs | 4 | 1 | ~59 ["), std::string::npos) << markdown;
}

// The speedup plot shades each band of no clear difference (here 32 to 128, speedup 1 with ±1% intervals) in its
// curve's colour and draws each crossing with its 95% interval as a bar along speedup 1; gnuplot draws the script.
TEST_F(AnalyzeCli, TheSpeedupPlotShadesTheBandsAndDrawsEachCrossingsInterval) {
  {
    ResultsWriter writer(dir_ + "/flat.h5", false);
    add_sweep_point(writer, 8, 1.0, 2.0);
    add_sweep_point(writer, 32, 2.0, 2.0);
    add_sweep_point(writer, 128, 4.0, 4.0);
    add_sweep_point(writer, 512, 16.0, 8.0);
    writer.close();
  }
  const Outcome o = run("report flat.h5 --out flat_plots");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string script = read_text(dir_ + "/flat_plots/speedup_vs_batch.gp");
  EXPECT_NE(script.find("set object rect from 32, graph 0 to 128, graph 1 fc rgb '#4e79a7' fs transparent solid"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find(",1 heads size screen 0.006,90 lw 3 lc rgb '#4e79a7' front"), std::string::npos) << script;
  EXPECT_NE(script.find("(break-even ~32 ["), std::string::npos) << script;
  if (o.err.find("gnuplot not found") == std::string::npos)
    EXPECT_NE(read_text(dir_ + "/flat_plots/speedup_vs_batch.svg").find("<svg"), std::string::npos);
}

// `report 2gpu.h5 4gpu.h5`: each N-GPU configuration pairs with the baseline of its own file (1-GPU steps of 1 ms
// and 1.5 ms; 2 GPUs at 2 ms, 4 at 0.5 ms: speedups 0.5 and 3, not 1 / 0.5 = 2 against the first file's), and no
// configuration is left "not paired".
TEST_F(AnalyzeCli, SeveralFilesPairEachConfigurationWithItsOwnFilesBaseline) {
  for (const auto& [name, single_ms, multi_ms, ranks] :
       {std::tuple<const char*, double, double, int>{"2gpu.h5", 1.0, 2.0, 2}, {"4gpu.h5", 1.5, 0.5, 4}}) {
    ResultsWriter writer(dir_ + "/" + name, false);
    add_sweep_point(writer, 8, single_ms, multi_ms, ranks);
    writer.close();
  }
  const Outcome o = run("report 2gpu.h5 4gpu.h5 --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json json = nlohmann::json::parse(o.out);
  const nlohmann::json& rows = json.at("tables").at("scaling").at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].at("gpus"), 4);
  EXPECT_NEAR(rows[0].at("speedup").get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(rows[1].at("speedup").get<double>(), 3.0, 1e-9);
  for (const nlohmann::json& note : json.at("tables").at("scaling").at("notes"))
    EXPECT_EQ(note.get<std::string>().find("not paired"), std::string::npos) << note;
}

TEST_F(AnalyzeCli, TraceWritesChromeTraceJson) {
  const Outcome o = run("trace good.h5 --configuration double --runs slowest -o out.json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("wrote 'out.json'"), std::string::npos) << o.out;
  const nlohmann::json trace = nlohmann::json::parse(read_text(dir_ + "/out.json"));
  EXPECT_EQ(trace.at("otherData").at("runs_shown").at("double"), std::vector<int>{0});
  std::size_t slices = 0;
  for (const nlohmann::json& e : trace.at("traceEvents"))
    if (e.at("ph") == "X") ++slices;
  EXPECT_EQ(slices, 2u * (1 + 3 * 6));           // per rank: the run, 3 steps of step + 5 phases
  EXPECT_EQ(run("trace good.h5").exit_code, 0);  // default: every configuration's median run into trace.json
  EXPECT_TRUE(fs::exists(dir_ + "/trace.json"));
}

TEST_F(AnalyzeCli, TraceBadInputsLeaveTheOutputAlone) {
  std::ofstream(dir_ + "/kept.json") << "old";
  expect_rejected(run("trace good.h5 --runs 1,x -o kept.json"), {"--runs 1,x", "'x'"});
  expect_rejected(run("trace good.h5 --runs 9 -o kept.json"), {"'single'", "'good.h5'", "not run 9"});
  expect_rejected(run("trace good.h5 --configuration nope -o kept.json"), {"'good.h5'", "nope"});
  expect_rejected(run("trace missing.h5 -o kept.json"), {"'missing.h5'"});
  expect_rejected(run("trace good.h5 good.h5 -o kept.json"), {"one results file"});
  EXPECT_EQ(read_text(dir_ + "/kept.json"), "old");
}

TEST_F(AnalyzeCli, BadFiles) {
  expect_rejected(run("report missing.h5"), {"'missing.h5'", "does not exist"});
  std::ofstream(dir_ + "/empty.h5").close();
  expect_rejected(run("report empty.h5"), {"'empty.h5'", "empty"});
  std::ofstream(dir_ + "/text.h5") << "not an HDF5 file\n";
  expect_rejected(run("report good.h5 text.h5"), {"'text.h5'", "not an HDF5 file"});
  const std::string no_configurations = dir_ + "/none.h5";
  ResultsWriter(no_configurations, false).close();
  expect_rejected(run("report none.h5"), {"'none.h5'", "holds no configurations"});
}

TEST_F(AnalyzeCli, MissingDatasetIsNamed) {
  const std::string path = file_with("cut.h5", true);
  {
    const H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(file.get(), "/configurations/single/step_ms", H5P_DEFAULT));
  }
  expect_rejected(run("report cut.h5"), {"'cut.h5'", "/configurations/single", "missing dataset 'step_ms'"});
}

TEST_F(AnalyzeCli, NewerSchemaVersionIsRefused) {
  const std::string path = file_with("future.h5", true);
  {
    const H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Attribute version(MGPU_H5_CHECK(H5Aopen(file.get(), "schema_version", H5P_DEFAULT)));
    const std::int32_t newer = results_schema::kVersion + 1;
    MGPU_H5_CHECK(H5Awrite(version.get(), H5T_NATIVE_INT32, &newer));
  }
  expect_rejected(run("compare good.h5 future.h5"),
                  {"'future.h5'", "schema_version " + std::to_string(results_schema::kVersion + 1), "newer"});
}

TEST_F(AnalyzeCli, ATruncatedFileIsOneLineWithoutInternals) {
  {
    std::ifstream in(good_, std::ios::binary);
    std::string bytes(3000, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(dir_ + "/cut.h5", std::ios::binary).write(bytes.data(), in.gcount());
  }
  const Outcome o = run("report cut.h5");
  expect_rejected(o, {"'cut.h5'", "truncated or not an mgpu_bench results file"});
  EXPECT_EQ(o.err.find("src/"), std::string::npos) << o.err;
}

// A step time that no clock can measure is refused, one line naming where it is: never "0 samples/s", never dropped
// as an outlier without a word. Every element is checked: one inside the file and the very first.
TEST_F(AnalyzeCli, ImpossibleStepTimesAreRefusedNamingWhereTheyAre) {
  for (const std::array<hsize_t, 3> where : {std::array<hsize_t, 3>{2, 0, 1}, std::array<hsize_t, 3>{0, 0, 0}})
    for (const double bad : {std::nan(""), HUGE_VAL, 0.0, -1.0}) {
      const std::string path = file_with("bad_step.h5", true);
      {
        const H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
        const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(file.get(), "/configurations/single/step_ms", H5P_DEFAULT)));
        const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
        MGPU_H5_CHECK(H5Sselect_elements(space.get(), H5S_SELECT_SET, 1, where.data()));  // run, rank, step
        const hsize_t one = 1;
        const H5Dataspace memory(MGPU_H5_CHECK(H5Screate_simple(1, &one, nullptr)));
        MGPU_H5_CHECK(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, &bad));
      }
      expect_rejected(run("report bad_step.h5"),
                      {"'bad_step.h5'", "configuration 'single'", "run " + std::to_string(where[0]),
                       "rank " + std::to_string(where[1]), "step " + std::to_string(where[2]), "step_ms is"});
      fs::remove(path);
    }
}

TEST_F(AnalyzeCli, CompareAFileWithItself) {
  const Outcome o = run("compare good.h5 good.h5 --alpha 0.01 --min-effect 0.05");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // The answer's interval rule at the level and band asked for.
  EXPECT_NE(o.out.find("when the ratio's 99% interval lies wholly above 1 + 5% / below 1 - 5%"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("after/before [99%]"), std::string::npos) << o.out;
  // On the terminal the verdict is a column of its own, last, after Welch's p.
  EXPECT_NE(o.out.find("  verdict\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  no significant difference\n"), std::string::npos) << o.out;
  // The configuration's name is text, left-aligned under its header.
  EXPECT_NE(o.out.find("\n  configuration  model"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n  single         "), std::string::npos) << o.out;
  const nlohmann::json json = nlohmann::json::parse(run("compare good.h5 good.h5 --format json").out);
  const nlohmann::json& rows = json.at("tables").at("comparison").at("rows");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("verdict"), "no significant difference");  // the answer's words
    EXPECT_DOUBLE_EQ(row.at("ratio").get<double>(), 1.0);
  }
}

// A side of several files (a build's processes in turn with the other's): each file's configuration is a trial of it,
// so the two sides of two files each are compared by their trial means, one row per configuration.
TEST_F(AnalyzeCli, CompareSidesOfSeveralFilesAreTrials) {
  const nlohmann::json json = nlohmann::json::parse(run("compare good.h5,good.h5 good.h5,good.h5 --format json").out);
  const nlohmann::json& table = json.at("tables").at("comparison");
  ASSERT_EQ(table.at("rows").size(), 2u);
  for (const auto& row : table.at("rows")) {
    EXPECT_EQ(row.at("before_trials"), 2);
    EXPECT_EQ(row.at("after_trials"), 2);
    EXPECT_DOUBLE_EQ(row.at("ratio").get<double>(), 1.0);
  }
  expect_rejected(run("compare good.h5, good.h5"), {"'good.h5,'", "empty file name"});
  expect_rejected(run("compare good.h5,missing.h5 good.h5"), {"missing.h5"});
}

TEST_F(AnalyzeCli, CompareIgnoresTheSettingsItIsToldTo) {
  const Outcome o = run("compare good.h5 good.h5 --ignore-setting precision --ignore-setting per-batch");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("whatever their precision, whatever the settings decided per batch (--ignore-setting)"),
            std::string::npos)
      << o.out;
  expect_rejected(run("compare good.h5 good.h5 --ignore-setting seed_of_the_moon"),
                  {"--ignore-setting seed_of_the_moon", "not a setting compare pairs on"});
  expect_rejected(run("compare good.h5 good.h5 --ignore-setting hosts"), {"--ignore-setting hosts"});
}

TEST_F(AnalyzeCli, CompareListsOneSidedConfigurations) {
  file_with("one_only.h5", true);
  const Outcome o = run("compare good.h5 one_only.h5");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("only in BEFORE: 'good.h5' double"), std::string::npos) << o.out;
}

TEST_F(AnalyzeCli, BadCommandLines) {
  expect_rejected(run(""), {"no command"});
  expect_rejected(run("plot good.h5"), {"unknown command 'plot'"});
  expect_rejected(run("trace good.h5 --bogus"), {"trace", "bogus"});
  expect_rejected(run("report good.h5 --format xml"), {"--format xml"});
  expect_rejected(run("report"), {"no results file"});
  expect_rejected(run("report good.h5 --outlier-threshold -1"), {"--outlier-threshold"});
  expect_rejected(run("report good.h5 --bogus"), {"bogus"});
  expect_rejected(run("report good.h5 --form csv"), {"'--form' (did you mean --format?)"});  // no guessing of --format
  expect_rejected(run("predict --check good.h5 --prob p.h5"), {"'--prob'"});
  expect_rejected(run("compare good.h5"), {"BEFORE.h5 AFTER.h5"});
  expect_rejected(run("compare good.h5 good.h5 --alpha 2"), {"--alpha"});
  const Outcome help = run("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: mgpu_analyze report"), std::string::npos);
  // compare's default band is the answer's minimum effect, printed from the constant.
  std::ostringstream band;
  band << "--min-effect E (=" << stats::kMinimumEffect << ")  the band E either side of 1 (the default: the answer's)";
  EXPECT_NE(help.out.find(band.str()), std::string::npos) << help.out;
  EXPECT_EQ(run("report --help").exit_code, 0);
  EXPECT_NE(help.out.find("mgpu_analyze trace FILE.h5"), std::string::npos);
  EXPECT_EQ(run("trace --help").exit_code, 0);
}

TEST_F(AnalyzeCli, PredictPrintsTheGridBreakEvenAndRecommendation) {
  step_cost_test::write_probe_and_sweep(dir_ + "/tools.h5");
  const Outcome o = run("predict --probe tools.h5 --allreduce tools.h5 --layers 16,8,3 --batch 16,32,64 --gpus 1,2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* part : {"Predicted step (ms)", "Break-even global batch", "for 16-8-3 on this machine, 2 GPUs"})
    EXPECT_NE(o.out.find(part), std::string::npos) << part << "\n" << o.out;
  const Outcome json =
      run("predict --probe tools.h5 --allreduce tools.h5 --layers 16,8,3 --batch 32 --gpus 2 "
          "--format json --out plots");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out).at("tables").at("prediction").at("rows");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].at("step_ms").get<double>(), 0.0516, 1e-12);  // hand-computed in test_step_cost.cpp
  EXPECT_NEAR(rows[0].at("speedup").get<double>(), 0.031 / 0.0516, 1e-12);
  EXPECT_TRUE(fs::exists(dir_ + "/plots/predicted_speedup.gp"));
  EXPECT_TRUE(fs::exists(dir_ + "/plots/predicted_speedup.dat"));
}

// A stated link's bound: any positive bandwidth (a slow link's 0.5 GB/s too) and a latency of 0; not 0 GB/s.
TEST_F(AnalyzeCli, PredictTakesAnyPositiveLinkBandwidthAndZeroLatency) {
  step_cost_test::write_probe_and_sweep(dir_ + "/tools.h5");
  const std::string base = "predict --probe tools.h5 --layers 16,8,3 --batch 8 --gpus 2 --format json ";
  const auto slow = run(base + "--link-bandwidth 0.5 --link-latency 0");
  EXPECT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_NE(slow.out.find("0.5 GB/s link"), std::string::npos) << slow.out;
  expect_rejected(run(base + "--link-bandwidth 0 --link-latency 0"), {"--link-bandwidth 0"});
  expect_rejected(run(base + "--link-bandwidth 0.5 --link-latency -0.5"), {"--link-latency -0.5"});
}

TEST_F(AnalyzeCli, PredictRefusesBadValuesByName) {
  step_cost_test::write_probe_and_sweep(dir_ + "/tools.h5");
  const std::string base = "predict --probe tools.h5 --allreduce tools.h5 ";
  expect_rejected(run("predict --layers 16,8,3 --batch 8"), {"--probe"});
  expect_rejected(run("predict --probe absent.h5 --layers 16,8,3 --batch 8"), {"absent.h5"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8,x"), {"--batch", "'x'"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --gpus 0"), {"--gpus 0"});
  // The bounds themselves, mgpu_bench's (the same rows): at most 2^20 GPUs and a global batch of at most 2^24.
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --gpus 1048577"), {"--gpus 1048577", "from 1 to 1048576"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 16777217"), {"--batch 16777217", "from 1 to 16777216"});
  expect_rejected(run(base + "--model medium,large --batch 8"), {"--model", "one preset"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 6 --gpus 4"), {"--batch 6", "4 GPUs"});
  expect_rejected(run(base + "--model huge --batch 8"), {"huge"});
  expect_rejected(run(base + "--model large --layers 16,8,3 --batch 8"), {"--model or --layers"});
  expect_rejected(run(base + "--layers 16,8,3"), {"--batch"});
  expect_rejected(run(base + "--layers 16,x,3 --batch 8"), {"--layers", "'x'"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --precision fp64"), {"--precision 'fp64'"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --precision tf32"), {"'tf32'"});  // not probed
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --link ib999"), {"--link 'ib999'"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --link-bandwidth -1 --link-latency 5"),
                  {"--link-bandwidth -1"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --link-bandwidth 10"), {"--link-latency"});
  expect_rejected(run(base + "--layers 16,8,3 --batch 8 --check absent.h5"), {"absent.h5"});
  // No 2-rank sweep and no link: the 2-GPU all-reduce cannot be modelled.
  expect_rejected(run("predict --probe tools.h5 --layers 16,8,3 --batch 8 --gpus 2"), {"--link"});
  // Refused before anything is written.
  EXPECT_FALSE(fs::exists(dir_ + "/never"));
  expect_rejected(run(base + "--layers 16,8,3 --batch 8,x --out never"), {"--batch"});
  EXPECT_FALSE(fs::exists(dir_ + "/never"));
}

// A cluster of nodes of 2: 2 GPUs in one node from the 2-rank sweep of one node (measured), 4 GPUs on 2 nodes from
// the cluster cost model (estimated) with the node's inside from that sweep; the step's all-reduce 1.06 x the table's.
TEST_F(AnalyzeCli, PredictOnAClusterShape) {
  step_cost_test::write_probe_and_sweep(dir_ + "/tools.h5");
  const Outcome o =
      run("predict --probe tools.h5 --allreduce tools.h5 --layers 16,8,3 --batch 16,32,64 --cluster 2x2 --link ib400 "
          "--format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json tables = nlohmann::json::parse(o.out).at("tables");
  const nlohmann::json cluster = tables.at("cluster_allreduce").at("rows");
  ASSERT_EQ(cluster.size(), 2u);  // 2 and 4 GPUs: the default 1, G, N x G
  EXPECT_EQ(cluster[0].at("gpus"), 2);
  EXPECT_EQ(cluster[0].at("layout"), "1 node x 2 GPUs");
  EXPECT_EQ(cluster[0].at("source"), "measured: the sweep on this layout");
  EXPECT_EQ(cluster[1].at("gpus"), 4);
  EXPECT_EQ(cluster[1].at("layout"), "2 nodes x 2 GPUs, 2 NICs per node");
  EXPECT_NE(cluster[1].at("source").get<std::string>().find("node measured: the sweep on 2 GPUs"), std::string::npos)
      << cluster[1];
  EXPECT_EQ(cluster[1].at("gradient_bytes"), 640);  // 160 fp32 parameters
  for (const nlohmann::json& row : tables.at("prediction").at("rows")) {
    if (row.at("gpus") == 4) {
      EXPECT_EQ(row.at("allreduce_source"), "estimated");
      EXPECT_NEAR(row.at("allreduce_ms").get<double>(), 1.06 * cluster[1].at("allreduce_ms").get<double>(), 1e-12);
    }
    if (row.at("gpus") == 2) EXPECT_NE(row.at("allreduce_source"), "estimated");
  }
  const std::string recommendation = nlohmann::json::parse(o.out).at("recommendation");
  EXPECT_NE(recommendation.find("2 GPUs in one node"), std::string::npos) << recommendation;
  EXPECT_NE(recommendation.find("4 GPUs on 2 nodes of 2 over ib400"), std::string::npos) << recommendation;
  // --nodes and --gpus-per-node say the same; --nics-per-node is each node's.
  const Outcome split =
      run("predict --probe tools.h5 --allreduce tools.h5 --layers 16,8,3 --batch 16 --nodes 2 --gpus-per-node 2 "
          "--nics-per-node 1 --link-bandwidth 10 --link-latency 2 --format json");
  ASSERT_EQ(split.exit_code, 0) << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out).at("tables").at("cluster_allreduce").at("rows")[1].at("layout"),
            "2 nodes x 2 GPUs, 1 NIC per node");
}

TEST_F(AnalyzeCli, PredictRefusesBadClusterValuesByName) {
  step_cost_test::write_probe_and_sweep(dir_ + "/tools.h5");
  const std::string base = "predict --probe tools.h5 --allreduce tools.h5 --layers 16,8,3 --batch 16 ";
  expect_rejected(run(base + "--cluster 2x --link ib400"), {"--cluster '2x'"});
  expect_rejected(run(base + "--cluster 0x8 --link ib400"), {"--cluster '0x8'"});
  expect_rejected(run(base + "--cluster 2x2 --nodes 2 --link ib400"), {"--cluster", "--nodes"});
  expect_rejected(run(base + "--nodes 2 --link ib400"), {"--nodes", "--gpus-per-node"});
  expect_rejected(run(base + "--gpus-per-node x --link ib400"), {"--gpus-per-node 'x'"});
  expect_rejected(run(base + "--gpus-per-node 2,4 --link ib400"), {"--gpus-per-node '2,4'"});
  expect_rejected(run(base + "--cluster 2x2 --nics-per-node 0 --link ib400"), {"--nics-per-node", "'0'"});
  expect_rejected(run(base + "--nics-per-node 2 --link ib400"), {"--nics-per-node", "cluster shape"});
  expect_rejected(run(base + "--cluster 2x2"), {"--link"});
  expect_rejected(run(base + "--gpus-per-node 2 --gpus 3 --link ib400"), {"--gpus 3", "nodes of 2"});
  expect_rejected(run(base + "--cluster 2x2 --gpus 8 --link ib400"), {"--gpus 8", "2 x 2"});
  expect_rejected(run(base + "--cluster 2x4 --link ib400"), {"4 GPUs of one node", "'GPU'", "--allreduce"});
  expect_rejected(run("predict --published absent.json"), {"absent.json"});
}

// --published alone: the model against each table, nothing else read; options of the step cost model refused, or
// read as a prediction that needs the probe.
TEST_F(AnalyzeCli, PredictAgainstAPublishedTable) {
  std::ofstream(dir_ + "/table.json")
      << R"({"name": "two rows", "url": "u", "hardware": "h", "software": "s", "gpu": "NVIDIA H100",
            "nvls": true, "link": "ib400", "nodes": 2, "gpus_per_node": 8, "nics_per_node": 8, "used_to_fit": false,
            "rows": [{"bytes": 8, "us": 24.7}, {"bytes": 134217728, "us": 748.3}]})";
  const Outcome o = run("predict --published table.json --format json");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json rows = nlohmann::json::parse(o.out).at("tables").at("published_two_rows").at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0].at("predicted_us").get<double>(), 24.7, 0.05);  // the tree's LL on 2 x 8: 6.3 + 18.4 us
  EXPECT_EQ(rows[1].at("algorithm"), "ring");
  const Outcome text = run("predict --published table.json");
  EXPECT_NE(text.out.find("worst |error|"), std::string::npos) << text.out;
  expect_rejected(run("predict --published table.json --gpus 2"), {"--gpus", "--published"});
  expect_rejected(run("predict --published table.json --cluster 2x8"), {"--cluster", "--published"});
  // Any of the step's options makes it a prediction, which needs the probe: none is ignored.
  expect_rejected(run("predict --published table.json --layers 8,4,1"), {"--probe"});
  expect_rejected(run("predict --published table.json --batch 32"), {"--probe"});
}
}  // namespace
