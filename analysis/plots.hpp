// Purpose: the report's plots, drawn by gnuplot into --out: throughput vs global batch per GPU count with 95%
// interval bars, speedup vs batch with the 1.0 line, and stacked phase bars per configuration. The data (.dat) and
// scripts (.gp) are always written next to the images, so a plot can be redrawn or restyled without mgpu_analyze.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"
#include "stats/scaling.hpp"

namespace mgpu::analysis {

struct PlotOutcome {
  std::vector<std::string> images;   // PNG files drawn
  std::vector<std::string> scripts;  // gnuplot scripts written (drawn or not)
  bool gnuplot_found = false;
};

// Writes data and scripts into directory and runs gnuplot on each script when it is on PATH. Throws Error when a file
// cannot be written or gnuplot fails on a script.
PlotOutcome write_plots(const std::string& directory, const std::vector<ConfigurationStats>& configurations,
                        const ScalingTable& scaling);

// Writes text to path (created or truncated); throws UsageError "cannot write '<path>'" when that fails. The report
// files in --out are written with it too.
void write_text(const std::string& path, const std::string& text);

// Quoted for a gnuplot string: only '"' and '\' need escaping.
std::string gnuplot_string(const std::string& text);

// Runs gnuplot on a script (its messages go to <script stem>.gnuplot.log, removed when it succeeds); throws Error
// naming the script and the log when gnuplot fails.
void run_gnuplot(const std::string& gnuplot, const std::string& script);

// The path of an executable found on PATH, or "" when there is none.
std::string find_on_path(const std::string& program);

}  // namespace mgpu::analysis
