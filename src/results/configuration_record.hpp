// Purpose: a resolved Configuration as its results group records it: the configuration itself (the schema writes each
// setting in the file's vocabulary, setting_attribute.hpp), its group name, device and the model's and batch's facts.
#pragma once

#include <string>

#include "config/configuration.hpp"
#include "results/results_schema.hpp"

namespace mgpu {

// Puts `configuration`, its group name and the facts derived from it (parameter counts, local batch) into `meta`, for
// a configuration run on `device` ("cuda" or "cpu"). Where, when and how fast it ran (hosts, libraries, GEMM choices,
// progress) are not settings: the caller records them.
void record_configuration(const Configuration& configuration, const std::string& device,
                          results_schema::ConfigurationMetadata& meta);

}  // namespace mgpu
