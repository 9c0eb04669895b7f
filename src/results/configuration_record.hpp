// Purpose: a resolved Configuration as its results group records it, and the Configuration a group describes: the one
// place where settings become the file's texts ("on"/"off", names) and those texts become settings again.
#pragma once

#include <string>

#include "config/configuration.hpp"
#include "results/results_schema.hpp"

namespace mgpu {

// Writes every setting attribute of `meta` (model, batch, GPU count, trial, every step setting, steps, runs, seed,
// Adam) and its name, for a configuration run on `device` ("cuda" or "cpu"). Where, when and how fast it ran (hosts,
// libraries, GEMM choices, progress) are not settings: the caller records them.
void record_configuration(const Configuration& configuration, const std::string& device,
                          results_schema::ConfigurationMetadata& meta);

// The configuration a group describes, as far as its attributes say: everything record_configuration writes but the
// stopping rules (--max-noise, --max-time: in command_line only) and the GEMM plan (what ran is gemm_choices).
// Throws UsageError naming the attribute and its text for a value no setting has.
Configuration configuration_from(const results_schema::ConfigurationMetadata& meta);

}  // namespace mgpu
