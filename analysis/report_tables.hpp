// Purpose: the report's and compare's tables (typed values, table.hpp renders them): per-configuration throughput
// statistics, the phase breakdown, the scaling table in the study's layout, and the before/after comparison.
#pragma once

#include <vector>

#include "stats/compare.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/scaling.hpp"
#include "table.hpp"

namespace mgpu::analysis {

Table configurations_table(const std::vector<stats::ConfigurationStats>& configurations,
                           const stats::AnalysisOptions& options);
// Every run of every configuration: throughput, modified z-score, kept or not (CSV and JSON only).
Table runs_table(const std::vector<stats::ConfigurationStats>& configurations);
Table phases_table(const std::vector<stats::ConfigurationStats>& configurations);
Table scaling_table(const stats::ScalingTable& scaling);
// Pairs measured by several jobs (stats::build_trial_scaling): the speedup over trials and the variance components.
Table trial_scaling_table(const std::vector<stats::TrialScalingPair>& pairs);
Table comparison_table(const stats::Comparison& comparison, const stats::CompareOptions& options);

}  // namespace mgpu::analysis
