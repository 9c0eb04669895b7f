// Purpose: the curve a configuration belongs to in the report's batch plots: model, GPU count and its non-default
// settings, so "large 2 GPUs nccl tree/simple" is a curve of its own beside "large 2 GPUs"; and a configuration's
// trials merged into one for the plots and views that show one entry per configuration.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

// "large 2 GPUs", "large 2 GPUs nccl tree/simple", "custom 16,8,3 1 GPU" (a custom model is named by its widths, so
// two custom models never share a curve).
std::string series_name(const stats::ConfigurationStats& configuration);

// The configurations grouped by (curve, global batch), each group a configuration's trials in the order given, the
// groups in the order of their first member.
std::vector<std::vector<const stats::ConfigurationStats*>> trial_groups(
    const std::vector<stats::ConfigurationStats>& configurations);

// One entry per configuration: the trials of one (curve, global batch) as one configuration whose phases and mean step
// are the means over its trials, labelled by its name without the trial suffix plus "(T trials)"; a configuration
// measured once as it is. For the phase bars and the timeline, which show where a step goes, not its variation.
std::vector<stats::ConfigurationStats> trials_merged(const std::vector<stats::ConfigurationStats>& configurations);

}  // namespace mgpu::analysis
