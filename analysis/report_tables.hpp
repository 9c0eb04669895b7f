// Purpose: the report's and compare's tables (typed values, table.hpp renders them): per-configuration throughput
// statistics, the phase breakdown, the scaling table in the study's layout, and the before/after comparison.
#pragma once

#include <vector>

#include "stats/answer.hpp"
#include "stats/compare.hpp"
#include "stats/configuration_stats.hpp"
#include "table.hpp"

namespace mgpu::analysis {

Table configurations_table(const std::vector<stats::ConfigurationStats>& configurations,
                           const stats::AnalysisOptions& options);
// Every run of every configuration: throughput, modified z-score, kept or not (CSV and JSON only).
Table runs_table(const std::vector<stats::ConfigurationStats>& configurations);
Table phases_table(const std::vector<stats::ConfigurationStats>& configurations);
// One row per pair of the answer: each side's throughput, the speedup with its interval (over the trial means where
// measured in trials), efficiency, both variance components, Welch's test (measured once) and the answer's verdict.
Table scaling_table(const stats::Answer& answer);
// Each trial of the pairs measured in trials against the 1-GPU trial matched to it (its own file's), over its runs
// (CSV and JSON always; on screen with --per-trial).
Table per_trial_table(const stats::Answer& answer, bool on_screen);
Table comparison_table(const stats::Comparison& comparison, const stats::CompareOptions& options);

}  // namespace mgpu::analysis
