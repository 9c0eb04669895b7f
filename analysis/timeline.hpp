// Purpose: the study's timeline view in the terminal: per configuration, one horizontal bar per phase of the mean
// step, placed where it happens in the step (forward, backward, exposed communication, optimizer, other in sequence;
// the all-reduce on its own row from the end of backward), on one time scale shared by all configurations.
#pragma once

#include <string>
#include <vector>

#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

// width: characters for the longest mean step.
std::string render_timeline(const std::vector<stats::ConfigurationStats>& configurations, int width = 60);

}  // namespace mgpu::analysis
