// Purpose: the report's plots, drawn by gnuplot into --out as PNG and SVG: the phase breakdown (one horizontal bar per
// configuration, its trials merged, normalised to its own step, the step time beside it), speedup vs batch (95%
// interval as error bars, the line at 1, the bands of no clear difference shaded, each crossing of 1 marked with its
// interval), throughput vs batch on log axes, and efficiency
// vs GPU count where more than two counts were measured. The data (.dat) and scripts (.gp) are always written next to
// the images, so a plot can be redrawn or restyled without mgpu_analyze.
#pragma once

#include <string>
#include <vector>

#include "stats/answer.hpp"
#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

struct Plot {
  std::string stem;    // "phases", "speedup_vs_batch", ...: file names are stem + .dat/.gp/.png/.svg
  std::string title;   // what it shows, for the report page
  bool drawn = false;  // the PNG and SVG exist (gnuplot was found)
};

struct PlotOutcome {
  std::vector<Plot> plots;  // in the order a reader should see them
  bool gnuplot_found = false;
};

// Writes data and scripts into directory and runs gnuplot on each script when it is on PATH. Throws Error when a file
// cannot be written or gnuplot fails on a script.
// Speedup and efficiency are the answer's pairs, one point each (over the trial means where measured in trials);
// throughput is one point per configuration, its trials merged the same way.
PlotOutcome write_plots(const std::string& directory, const std::vector<stats::ConfigurationStats>& configurations,
                        const stats::Answer& answer);

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
