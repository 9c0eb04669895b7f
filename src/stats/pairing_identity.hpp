// Purpose: which configurations are "the same" — the one place that defines the identity keys the scaling table
// (pairs an N-GPU configuration with its 1-GPU baseline) and compare (pairs before with after) match on.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/results_reader.hpp"

namespace mgpu::stats {

// An attribute that is part of a configuration's identity. One added after schema_version 1 is absent from older
// files (docs/results-format.md, Versioning); such a file implies its ConfigurationMetadata default.
struct IdentityAttribute {
  const char* name;
};

// The attributes whose role (their rows: config/settings_table.hpp, results_schema.hpp) is `scaled`: what the model
// computes and how it is trained and timed on any GPU count. An N-GPU configuration pairs with the 1-GPU baseline that
// matches it in all of them.
const std::vector<IdentityAttribute>& scaling_identity_attributes();
// The attributes whose role is `compared` or `scaled`: the scaling identity plus the GPU count, the NCCL settings, how
// gradients are reduced and the fused optimizer. What compare pairs before with after on.
const std::vector<IdentityAttribute>& comparison_identity_attributes();

// `attributes` less global_batch: the identity of a curve over batches, or of configurations that differ in batch only.
std::vector<IdentityAttribute> without_global_batch(const std::vector<IdentityAttribute>& attributes);

// A setting of NCCL's group (nccl_algo, nccl_proto: their rows in config/settings_table.hpp), which compare
// --ignore-nccl-settings leaves out.
bool is_nccl_setting(const IdentityAttribute& attribute);

// The values of the given attributes, in order, as one comparable key.
std::vector<std::string> identity_key(const ConfigurationResults& configuration,
                                      const std::vector<IdentityAttribute>& attributes);
// The attribute's text; when absent, its ConfigurationMetadata default if it was added after schema_version 1, else "".
std::string attribute_or_default(const ConfigurationResults& configuration, const IdentityAttribute& attribute);

// A short human label: the group name, plus the settings that differ from their defaults ("nccl tree/simple", ...).
std::string configuration_label(const ConfigurationResults& configuration);

}  // namespace mgpu::stats
