// Purpose: the curve a configuration belongs to in the report's batch plots and break-even table: model, GPU count
// and its non-default settings, so "large 2 GPUs nccl tree/simple" is a curve of its own beside "large 2 GPUs".
#pragma once

#include <string>

#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

// "large 2 GPUs", "large 2 GPUs nccl tree/simple", "custom 16,8,3 1 GPU" (a custom model is named by its widths, so
// two custom models never share a curve).
std::string series_name(const stats::ConfigurationStats& configuration);

}  // namespace mgpu::analysis
