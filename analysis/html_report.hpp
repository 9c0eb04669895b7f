// Purpose: report.html, the report as one self-contained page to share: the answer first, in mgpu_bench's words (each
// pair's figures and sentence as its verdict prints them, the break-even batches, missing baselines with the command
// that measures them), then the plots (inline SVG data: URIs, no network), the tables with their notes, the timeline
// and the run conditions (every attribute of every configuration). An inline script marks the page once it has loaded:
// data-check="ok" when every image decoded and every table has rows, which the page test reads back from a browser.
#pragma once

#include <string>
#include <vector>

#include "plots.hpp"
#include "stats/answer.hpp"
#include "stats/configuration_stats.hpp"
#include "table.hpp"

namespace mgpu::analysis {

struct HtmlReportInput {
  std::vector<std::string> files;
  const std::vector<stats::ConfigurationStats>& configurations;
  const stats::Answer& answer;
  const std::vector<Table>& tables;  // shown in this order when on screen and not empty
  std::string timeline;
  const PlotOutcome& plots;
  std::string plot_directory;  // where the plots' SVG files are, read and inlined
};

// The whole page. Throws UsageError when a drawn plot's SVG cannot be read.
std::string render_html_report(const HtmlReportInput& input);

}  // namespace mgpu::analysis
