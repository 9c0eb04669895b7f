// Purpose: report.html's content for a synthetic file (analysis_fixture.hpp): the answer sentence with the speedup's
// interval, the missing-baseline note with its command, tables with rows, every attribute under run conditions (common
// ones once), text escaped, nothing that would be fetched from elsewhere, and a stylesheet whose lengths have units.
// The page in a real browser is check_report_page.py's test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <tuple>

#include "analysis_fixture.hpp"
#include "html_report.hpp"
#include "report_tables.hpp"
#include "stats/verdict.hpp"

namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::stats;
using namespace mgpu::analysis_test;

namespace {

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("mgpu_html_" + std::to_string(::getpid()) + ".h5")).string();
    ResultsWriter writer(path_, true);
    add_single(writer);
    add_double(writer);
    add_double(writer, "lonely<2>");  // same as double, but a name to escape; paired as well
    writer.close();
    file_ = read_results_file(path_);
    for (const ConfigurationResults& c : file_.configurations)
      stats_.push_back(compute_configuration_stats(c, "s.h5", {}));
  }
  void TearDown() override { fs::remove(path_); }

  // Without plots by default, as without gnuplot.
  std::string page(const Answer& answer, const PlotOutcome& plots = {},
                   const std::string& plot_directory = "/nonexistent") const {
    const std::vector<Table> tables = {configurations_table(stats_, {}), scaling_table(answer)};
    return render_html_report({{"s.h5"}, stats_, answer, tables, "timeline <text>", plots, plot_directory});
  }

  std::string path_;
  ResultsFile file_;
  std::vector<ConfigurationStats> stats_;
};

TEST_F(HtmlReport, AnswerTablesAndConditions) {
  const std::string html = page(compute_answer(stats_));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // 3520 / 1840 with Fieller's interval (test_report_tables.cpp derives it), in the verdict's words.
  EXPECT_NE(html.find("<li><b class=\"sentence\">2 GPUs are 1.91x as fast as 1 [1.60, 2.29]: adding a GPU speeds this "
                      "step up</b><br><span class=\"figures\">16-8-3, global batch 8, 2 GPUs: speedup 1.913 [1.599, "
                      "2.286], efficiency 95.7%, Welch p 0.000283 (kept runs 5/5 on 2, 5/6 on 1)</span></li>"),
            std::string::npos)
      << html;
  // "lonely<2>" is a second trial of "double" with no second 1-GPU trial: one pair, one sentence.
  EXPECT_EQ(html.find("<li><b class=\"sentence\">", html.find("<li><b class=\"sentence\">") + 1), std::string::npos);
  EXPECT_NE(html.find("<td class=\"text\">single</td>"), std::string::npos);
  EXPECT_NE(html.find("lonely&lt;2&gt;"), std::string::npos);
  EXPECT_EQ(html.find("lonely<2>"), std::string::npos);
  EXPECT_NE(html.find("<pre>timeline &lt;text&gt;</pre>"), std::string::npos);
  EXPECT_NE(html.find("gnuplot was not found"), std::string::npos);
  // Run conditions: an attribute all share once, one that differs under each configuration.
  EXPECT_NE(html.find("<h3>Common to every configuration</h3>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>adam_beta2</td><td>0.9990000128746033</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>ranks</td><td>2</td></tr>"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // The answer's scaling table opens the Tables section (page() passes it after the configurations table), once.
  const std::string heading = "<h3>" + scaling_table(compute_answer(stats_)).title + "</h3>";
  EXPECT_NE(html.find("<h2 id=\"tables\">Tables</h2>\n" + heading), std::string::npos) << html;
  EXPECT_EQ(html.find(heading, html.find(heading) + 1), std::string::npos) << html;
}

// The page's answer is mgpu_bench's verdict, sentence for sentence: every pair's figures and sentence lines of
// verdict_lines appear, escaped, in the answer's list, and no other sentence does.
TEST_F(HtmlReport, TheAnswerIsTheVerdictWordForWord) {
  const Answer answer = compute_answer(stats_);
  const std::string html = page(answer);
  const std::vector<std::string> lines = verdict_lines(file_, 2);
  std::size_t sentences = 0;
  for (const std::string& line : lines) {
    if (line.rfind("    ", 0) != 0) continue;  // a pair's sentence is the indented line under its figures
    ++sentences;
    EXPECT_NE(html.find("<b class=\"sentence\">" + line.substr(4) + "</b>"), std::string::npos) << line;
  }
  EXPECT_EQ(sentences, answer.pairs.size());
}

// Each drawn plot is embedded as its SVG in base64, padded to a multiple of 4 characters: files of 6, 7 and 8 bytes
// (no padding, "==" and "=") read back as they were written.
TEST_F(HtmlReport, PlotsAreEmbeddedAsTheirSvgInBase64) {
  const fs::path directory = fs::temp_directory_path() / ("mgpu_html_plots_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  PlotOutcome plots;
  plots.gnuplot_found = true;
  const std::pair<std::string, std::string> svgs[] = {
      {"<svg/>", "PHN2Zy8+"}, {"<svg />", "PHN2ZyAvPg=="}, {"<svg  />", "PHN2ZyAgLz4="}};
  for (const auto& [svg, encoded] : svgs) {
    const std::string stem = "plot" + std::to_string(plots.plots.size());
    write_text((directory / (stem + ".svg")).string(), svg);
    plots.plots.push_back({stem, "title of " + stem, true});
  }
  const std::string html = page(compute_answer(stats_), plots, directory.string());
  fs::remove_all(directory);
  for (const auto& [svg, encoded] : svgs)
    EXPECT_NE(html.find("src=\"data:image/svg+xml;base64," + encoded + "\""), std::string::npos) << svg;
  EXPECT_EQ(html.find("gnuplot was not found"), std::string::npos);
  // A plot scales down to the page's width, never past it.
  EXPECT_NE(html.find("figure img { max-width: 100%; height: auto;"), std::string::npos);
}

// A browser drops a declaration with a length that has no unit (`margin: 0.3em 1`) and draws the element as if it
// were not there: every number in the stylesheet but 0, a colour's digits and line-height's factor carries its unit.
TEST_F(HtmlReport, EveryLengthInTheStyleSheetHasAUnit) {
  const std::string html = page(compute_answer(stats_));
  const std::size_t begin = html.find("<style>"), end = html.find("</style>");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  const std::string style = html.substr(begin, end - begin);
  const std::regex declaration(R"(([a-z-]+)\s*:\s*([^;{}]+);)");
  const std::regex colour("#[0-9a-fA-F]+");
  const std::regex number(R"((^|[\s(,])(-?[0-9]*\.?[0-9]+)([a-z%]*))");
  int lengths = 0;
  for (auto d = std::sregex_iterator(style.begin(), style.end(), declaration); d != std::sregex_iterator(); ++d) {
    if ((*d)[1] == "line-height") continue;
    const std::string value = std::regex_replace((*d)[2].str(), colour, "");
    for (auto n = std::sregex_iterator(value.begin(), value.end(), number); n != std::sregex_iterator(); ++n) {
      ++lengths;
      EXPECT_TRUE(!(*n)[3].str().empty() || std::stod((*n)[2]) == 0.0) << (*d)[0];
    }
  }
  EXPECT_GT(lengths, 20);
}

TEST_F(HtmlReport, MissingBaselineIsANoteWithItsCommand) {
  Answer answer;
  answer.scaling.without_baseline.push_back(&stats_[1]);
  const std::string html = page(answer);
  EXPECT_NE(html.find("<p class=\"missing\">'s.h5' double (2 GPUs) has no 1-GPU baseline"), std::string::npos) << html;
  EXPECT_NE(html.find("mpirun -np 1 mgpu_bench --layers 16,8,3 --batch 8 --gpus 1 "), std::string::npos);
}

}  // namespace
