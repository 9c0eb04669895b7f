// Purpose: render_html_report (html_report.hpp).
#include "html_report.hpp"

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "missing_baseline.hpp"
#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "series.hpp"
#include "stats/speedup_interval.hpp"

namespace mgpu::analysis {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string base64(const std::string& bytes) {
  using namespace boost::archive::iterators;
  using Encoder = base64_from_binary<transform_width<std::string::const_iterator, 6, 8>>;
  std::string out(Encoder(bytes.begin()), Encoder(bytes.end()));
  return out.append((3 - bytes.size() % 3) % 3, '=');
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string html_table(const Table& table) {
  const ShownTable shown = shown_table(table);
  std::string out = "<h3>" + escape(table.title) + "</h3>\n<div class=\"wide\"><table>\n<thead><tr>";
  for (std::size_t c = 0; c < shown.headers.size(); ++c)
    out += std::string("<th") + (shown.left_aligned[c] ? " class=\"text\"" : "") + ">" + escape(shown.headers[c]) +
           "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const std::vector<std::string>& row : shown.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c)
      out += std::string("<td") + (shown.left_aligned[c] ? " class=\"text\"" : "") + ">" + escape(row[c]) + "</td>";
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  if (!table.notes.empty()) {
    out += "<ul class=\"notes\">\n";
    for (const std::string& note : table.notes) out += "<li>" + escape(note) + "</li>\n";
    out += "</ul>\n";
  }
  return out;
}

// A two-column table of attribute names and values.
std::string attribute_table(const std::map<std::string, std::string>& attributes) {
  std::string out =
      "<div class=\"wide\"><table class=\"attributes\">\n<thead><tr><th class=\"text\">attribute</th>"
      "<th class=\"text\">value</th></tr></thead>\n<tbody>\n";
  for (const auto& [name, value] : attributes)
    out += "<tr><td>" + escape(name) + "</td><td>" + escape(value) + "</td></tr>\n";
  return out + "</tbody></table></div>\n";
}

// Every attribute of every configuration: those equal in all of them once, then per configuration the rest.
std::string conditions_section(const std::vector<stats::ConfigurationStats>& configurations) {
  std::map<std::string, std::string> common = configurations.front().results->attribute_text;
  for (const stats::ConfigurationStats& s : configurations)
    for (auto it = common.begin(); it != common.end();) {
      const auto other = s.results->attribute_text.find(it->first);
      it = (other == s.results->attribute_text.end() || other->second != it->second) ? common.erase(it) : std::next(it);
    }
  std::string out =
      "<h2 id=\"conditions\">Run conditions</h2>\n<p>Every attribute the results files record (GPUs, "
      "links, library versions, clocks, NCCL settings, command lines).</p>\n";
  if (!common.empty()) out += "<h3>Common to every configuration</h3>\n" + attribute_table(common);
  // A configuration's first trial shows its own attributes; its later trials only the names of those that differ
  // from the first's (start time, GEMM choices, ...: the values are in the results file).
  for (const std::vector<const stats::ConfigurationStats*>& group : trial_groups(configurations)) {
    const stats::ConfigurationStats& first = *group.front();
    std::map<std::string, std::string> own;
    for (const auto& [name, value] : first.results->attribute_text)
      if (common.count(name) == 0) own[name] = value;
    std::set<std::string> differing;
    for (std::size_t k = 1; k < group.size(); ++k)
      for (const auto& [name, value] : group[k]->results->attribute_text) {
        const auto in_first = first.results->attribute_text.find(name);
        if (in_first == first.results->attribute_text.end() || in_first->second != value) differing.insert(name);
      }
    if (own.empty() && differing.empty()) continue;
    out += "<details><summary>" + escape(first.label) + " <span class=\"file\">(" + escape(first.file) + ")</span>";
    if (group.size() >= 2) out += " and " + std::to_string(group.size() - 1) + " more trials";
    out += "</summary>\n" + attribute_table(own);
    if (!differing.empty()) {
      std::string names;
      for (const std::string& name : differing) names += (names.empty() ? "" : ", ") + name;
      out += "<p class=\"notes\">Trials 2 to " + std::to_string(group.size()) +
             " differ from the first in: " + escape(names) + ".</p>\n";
    }
    out += "</details>\n";
  }
  return out;
}

// The answer as mgpu_bench's verdict says it: per pair, word for word, its sentence and its figures; per curve its
// break-even; then what could not be paired.
std::string answer_section(const stats::Answer& answer) {
  const stats::ScalingTable& scaling = answer.scaling;
  std::string out = "<h2 id=\"answer\">Answer</h2>\n";
  if (answer.pairs.empty() && scaling.without_baseline.empty())
    out += "<p>Only 1-GPU configurations were given: no speedup to report.</p>\n";
  if (!answer.pairs.empty()) {
    out += "<ul class=\"answer\">\n";
    for (const stats::PairAnswer& a : answer.pairs)
      out += "<li><b class=\"sentence\">" + escape(a.sentence) + "</b><br><span class=\"figures\">" +
             escape(a.figures) + "</span></li>\n";
    out += std::string(
               "</ul>\n<p class=\"notes\">Speedup = mean throughput on N GPUs / on 1 GPU, same model, global "
               "batch and settings; interval: ") +
           escape(stats::kRatioIntervalMethod) +
           ", 95%, over the runs of a pair measured once and over the trial means (paired by trial) of a pair measured "
           "in trials.</p>\n";
  }
  if (!answer.break_evens.empty()) {
    out += "<h3>Break-even</h3>\n<ul class=\"answer\">\n";
    for (const stats::BreakEvenAnswer& curve : answer.break_evens)
      out += "<li><b>" + escape(curve.curve) + "</b>: " + escape(curve.sentence) + "</li>\n";
    out += "</ul>\n";
  }
  for (const stats::ConfigurationStats* s : scaling.without_baseline)
    out += "<p class=\"missing\">" + escape(missing_baseline_note(*s)) + "</p>\n";
  for (const stats::ConfigurationStats* s : scaling.wrong_steps)
    out += "<p class=\"missing\">" + escape(s->results->metadata.name + ": not paired, " + s->wrong_step()) + "</p>\n";
  return out;
}

const char kStyle[] = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 2em auto;
       max-width: 1250px; padding: 0 1.5em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05em; margin-bottom: 0.4em; }
.meta, .file, .notes { color: #555; font-size: 0.9em; }
.answer li { margin: 0.4em 0; } .answer b { font-variant-numeric: tabular-nums; }
.figures { color: #555; font-size: 0.85em; }
.missing { background: #fff6e0; border-left: 4px solid #f2a900; padding: 0.6em 1em; }
code { background: #f3f3f3; padding: 0.1em 0.3em; border-radius: 3px; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.95em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; margin: 0.3em 0; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #e5e5e5; text-align: right; white-space: nowrap; }
th { background: #f6f6f6; } .text { text-align: left; }
.attributes td { text-align: left; } .attributes td + td { white-space: pre-wrap; word-break: break-all; }
pre { background: #f8f8f8; padding: 1em; overflow-x: auto; font-size: 0.8em; line-height: 1.2; }
details { margin: 0.4em 0; } summary { cursor: pointer; }
)";

// Marks the page for the browser test (and anyone curious): data-check="ok" once every image has decoded and every
// table has a row; data-script-error when any script failed.
const char kCheckScript[] = R"(
window.addEventListener('error', function () { document.documentElement.setAttribute('data-script-error', 'true'); });
window.addEventListener('load', function () {
  var images = Array.prototype.slice.call(document.images);
  var decoded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var tables = Array.prototype.slice.call(document.querySelectorAll('table'));
  var filled = tables.filter(function (t) { return t.querySelectorAll('tbody tr').length > 0; }).length;
  var body = document.body;
  body.setAttribute('data-images', decoded + '/' + images.length);
  body.setAttribute('data-tables', filled + '/' + tables.length);
  body.setAttribute('data-check', decoded === images.length && filled === tables.length ? 'ok' : 'failed');
});
)";

}  // namespace

std::string render_html_report(const HtmlReportInput& in) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>mgpu_bench report</title>\n<style>" +
      std::string(kStyle) + "</style>\n<script>" + kCheckScript + "</script>\n</head>\n<body>\n";
  page += "<h1>Does adding GPUs make this training step faster?</h1>\n<p class=\"meta\">mgpu_analyze " +
          escape(project_version()) + " (git " + escape(git_revision()) + ") on";
  for (const std::string& file : in.files) page += " <code>" + escape(file) + "</code>";
  page += "</p>\n";

  page += answer_section(in.answer);
  page += "<h2 id=\"plots\">Plots</h2>\n";
  for (const Plot& plot : in.plots.plots) {
    if (!plot.drawn) continue;
    const std::string svg = read_file(in.plot_directory + "/" + plot.stem + ".svg");
    page += "<figure><img alt=\"" + escape(plot.title) + "\" src=\"data:image/svg+xml;base64," + base64(svg) +
            "\"><figcaption>" + escape(plot.title) + " (<code>" + escape(plot.stem) +
            ".png</code>, <code>.svg</code>)</figcaption></figure>\n";
  }
  if (!in.plots.gnuplot_found)
    page +=
        "<p class=\"missing\">gnuplot was not found on PATH: no plots (their data and scripts are next to this "
        "page).</p>\n";

  page += "<h2 id=\"tables\">Tables</h2>\n";
  // The answer's tables first (scaling, break-even), then the rest in the report's order.
  std::vector<const Table*> ordered;
  for (const char* key : {"scaling", "break_even"})
    for (const Table& table : in.tables)
      if (table.key == key) ordered.push_back(&table);
  for (const Table& table : in.tables)
    if (table.key != "scaling" && table.key != "break_even") ordered.push_back(&table);
  for (const Table* entry : ordered) {
    const Table& table = *entry;
    if (!table.on_screen) continue;
    if (table.rows.empty()) {
      page += "<h3>" + escape(table.title) + "</h3>\n<ul class=\"notes\">\n";
      for (const std::string& note : table.notes) page += "<li>" + escape(note) + "</li>\n";
      page += "</ul>\n";
      continue;
    }
    page += html_table(table);
  }
  if (!in.timeline.empty()) page += "<h3>Timeline of the mean step</h3>\n<pre>" + escape(in.timeline) + "</pre>\n";
  page += conditions_section(in.configurations);
  return page + "</body>\n</html>\n";
}

}  // namespace mgpu::analysis
