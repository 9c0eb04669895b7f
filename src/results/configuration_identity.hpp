// Purpose: when a configuration in a results file is the one a command would run (for --resume): every attribute of
// ConfigurationMetadata whose role (results_schema.hpp) is not a condition of where and when it ran.
#pragma once

#include <string>

#include "results/results_schema.hpp"

namespace mgpu {

// Attributes whose role is a condition (results_schema.hpp): where and when a configuration ran (hosts, GPU serials,
// bus ids, topology, clocks, start time, command line, attempt) or what its set-up chose, not what it measures.
bool is_condition_attribute(const std::string& name);

// "" when `stored` (read from a file) measures what `planned` would; otherwise one phrase naming the first attribute
// that differs and both values ("seed is 1 in the file, 2 in this command"). Names are compared by the caller.
std::string identity_difference(const results_schema::ConfigurationMetadata& planned,
                                const results_schema::ConfigurationMetadata& stored);

}  // namespace mgpu
