// Purpose: `mgpu_analyze trace`: a results file's steps as a Chrome trace-event JSON (the format Perfetto and
// chrome://tracing open): one process per configuration, per rank a compute track (run > step > phases nested) and a
// communication track (the all-reduce), warm-up steps marked, each run's clocks and throttling as counters, every
// attribute of the configuration as metadata. The file holds durations, not timestamps, so where each slice sits is a
// layout rule (docs/report.md, "Trace"): durations are the file's values exactly.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

// Which runs of each configuration the trace shows: every run, the runs listed (0-based run indices), or the one run
// with the lowest, median or highest throughput (all completed runs, outliers included: the slowest run is the one
// to look at when a run was excluded).
struct RunSelection {
  enum class Kind { all, listed, slowest, median, fastest };
  Kind kind = Kind::median;
  std::vector<int> listed;
};

// "all", "slowest", "median", "fastest" or "R1,R2,..." (non-negative integers); throws UsageError naming the text.
RunSelection parse_run_selection(const std::string& text);

// The runs of one configuration, ascending; throws UsageError naming the configuration when a listed run does not
// exist in it.
std::vector<int> select_runs(const stats::ConfigurationStats& configuration, const RunSelection& selection);

// The whole trace ({"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}); ts and dur in µs.
nlohmann::json chrome_trace(const std::vector<stats::ConfigurationStats>& configurations,
                            const RunSelection& selection);

}  // namespace mgpu::analysis
