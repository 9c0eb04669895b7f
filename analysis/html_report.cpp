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
#include "stats/speedup_interval.hpp"
#include "stats/statistics.hpp"

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

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// "2 GPUs are 0.65× as fast as 1 [0.64, 0.66] (efficiency 0.33, Welch p 1.2e-05): adding GPUs slows this step down."
std::string verdict_sentence(const stats::ScalingPair& pair) {
  const stats::RatioInterval& r = pair.speedup;
  const int n = pair.multi->results->ranks();
  std::string sentence = std::to_string(n) + " GPUs are " + fixed(r.ratio, 3) + "× as fast as 1";
  sentence += r.has_interval ? " [" + fixed(r.low, 3) + ", " + fixed(r.high, 3) + "]" : " (no 95% interval)";
  char details[96];
  if (pair.welch.valid)
    std::snprintf(details, sizeof details, " (efficiency %.3f, Welch p %.2g)", pair.efficiency, pair.welch.p);
  else
    std::snprintf(details, sizeof details, " (efficiency %.3f)", pair.efficiency);
  sentence += details;
  // The interval decides, beyond the verdicts' minimum effect (stats/statistics.hpp); without one (under 5 kept runs on
  // a side, or an unbounded Fieller set) Welch's test and the ratio do.
  const double e = stats::kMinimumEffect;
  const bool significant = pair.welch.valid && pair.welch.p < 0.05;
  const bool slower = r.has_interval ? r.high < 1 - e : significant && r.ratio < 1 - e;
  const bool faster = r.has_interval ? r.low > 1 + e : significant && r.ratio > 1 + e;
  if (slower) return sentence + ": adding GPUs slows this step down.";
  if (faster) return sentence + ": adding GPUs speeds this step up.";
  return sentence + ": no difference of 2% or more shown at 95%.";
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
    out += "<tr><td class=\"text\">" + escape(name) + "</td><td class=\"text value\">" + escape(value) + "</td></tr>\n";
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
  for (const stats::ConfigurationStats& s : configurations) {
    std::map<std::string, std::string> own;
    for (const auto& [name, value] : s.results->attribute_text)
      if (common.count(name) == 0) own[name] = value;
    if (own.empty()) continue;
    out += "<details><summary>" + escape(s.label) + " <span class=\"file\">(" + escape(s.file) +
           ")</span></summary>\n" + attribute_table(own) + "</details>\n";
  }
  return out;
}

const char kStyle[] = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 2em auto;
       max-width: 1250px; padding: 0 1.5em; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05em; margin-bottom: 0.4em; }
.meta, .file, .notes { color: #555; font-size: 0.9em; }
.answer li { margin: 0.3em 0; } .answer b { font-variant-numeric: tabular-nums; }
.missing { background: #fff6e0; border-left: 4px solid #f2a900; padding: 0.6em 1em; }
code { background: #f3f3f3; padding: 0.1em 0.3em; border-radius: 3px; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #444; font-size: 0.95em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; font-variant-numeric: tabular-nums; margin: 0.3em 0; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #e5e5e5; text-align: right; white-space: nowrap; }
th { background: #f6f6f6; } .text { text-align: left; } .value { white-space: pre-wrap; word-break: break-all; }
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

  page += "<h2 id=\"answer\">Answer</h2>\n";
  if (in.scaling.pairs.empty() && in.scaling.without_baseline.empty())
    page += "<p>Only 1-GPU configurations were given: no speedup to report.</p>\n";
  if (!in.scaling.pairs.empty()) {
    page += "<ul class=\"answer\">\n";
    for (const stats::ScalingPair& pair : in.scaling.pairs) {
      const ConfigurationMetadata& m = pair.multi->results->metadata;
      page += "<li><b>" + escape(m.model) + ", batch " + std::to_string(m.global_batch) +
              "</b> <span class=\"file\">(" + escape(pair.multi->label) +
              ")</span>: " + escape(verdict_sentence(pair)) + "</li>\n";
    }
    page +=
        "</ul>\n<p class=\"notes\">Speedup = mean throughput on N GPUs / on 1 GPU, same model and global batch; "
        "interval: " +
        escape(stats::kRatioIntervalMethod) + ", 95%.</p>\n";
  }
  if (!in.break_evens.empty()) {
    page += "<h3>Break-even batch</h3>\n<ul class=\"answer\">\n";
    for (const BreakEvenCurve& curve : in.break_evens) {
      page += "<li><b>" + escape(curve.series) + "</b>: " + escape(stats::describe_break_even(curve.break_even));
      if (curve.break_even.smallest_significant)
        page +=
            "; significantly faster from batch " + std::to_string(curve.break_even.smallest_significant->global_batch);
      page += ".</li>\n";
    }
    page += "</ul>\n";
  }
  for (const stats::ConfigurationStats* s : in.scaling.without_baseline)
    page += "<p class=\"missing\">" + escape(missing_baseline_note(*s)) + "</p>\n";
  for (const stats::ConfigurationStats* s : in.scaling.wrong_steps)
    page += "<p class=\"missing\">" + escape(s->results->metadata.name + ": not paired, " + s->wrong_step()) + "</p>\n";

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
