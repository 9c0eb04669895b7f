// Purpose: when a configuration has measured enough runs (docs/measurement.md, "When a configuration stops"): its
// throughput interval narrow enough for the speedup interval --max-noise asks for, or --max-time spent, and what the
// results file and the console say of it.
#pragma once

#include <string>
#include <vector>

#include "study/run_summary.hpp"

namespace mgpu {

// Kept throughput runs a configuration measures before the noise rule may stop it: enough for the interval's t factor
// to have settled (t(0.975, 9) = 2.26 against 1.96 in the limit) and for --timing interleaved to have marked two runs.
inline constexpr int kMinimumRunsBeforeNoiseStop = 10;

struct StopRule {
  double max_noise_percent = 0;  // 0 = off
  double max_time_seconds = 0;   // 0 = no limit
  bool interleaved = false;      // --timing interleaved: throughput from the unmarked runs, one marked run needed
};

// Why a configuration's runs ended: "" while it goes on. Otherwise one of
//   "noise: the throughput's 95% half-width 0.31% is within 0.71% (--max-noise 1%)",
//   "time: 60.2 s of runs, --max-time 60 s".
// The noise rule holds each configuration's relative half-width to max_noise / sqrt(2): the relative half-widths of
// two independent means add in quadrature in their ratio, so two configurations within it give a speedup interval
// within max_noise. Both count and summarise the throughput runs the answer's outlier screen keeps (default
// threshold), and neither stops a configuration before it has an interval (kMinimumRunsForInterval kept throughput
// runs, and a marked run where interleaved); --runs bounds them all.
std::string stop_reason(const StopRule& rule, const std::vector<RunSummary>& runs, double seconds_of_runs);

}  // namespace mgpu
