// Purpose: identity keys of configurations, defined once.
#include "stats/pairing_identity.hpp"

#include <cstring>
#include <map>

namespace mgpu::analysis {

const std::vector<IdentityAttribute>& scaling_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = {
      {"model"},
      {"layer_widths"},
      {"dropout"},
      {"global_batch"},
      {"batch_mode"},
      {"device"},
      {"precision"},
      {"warmup_steps"},
      {"measured_steps"},
      {"seed"},
      {"adam_learning_rate"},
      {"adam_beta1"},
      {"adam_beta2"},
      {"adam_epsilon"},
      // Added in schema_version 2; the defaults are what a version-1 run did.
      {"graph"},
      {"accumulate_steps"},
      {"timing"},
      {"implementation"},
  };
  return attributes;
}

const std::vector<IdentityAttribute>& comparison_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = [] {
    std::vector<IdentityAttribute> all = scaling_identity_attributes();
    all.push_back({"ranks"});
    all.push_back({"nccl_algo"});
    all.push_back({"nccl_proto"});
    all.push_back({"environment_preset"});
    // How the gradients are reduced: meaningless on 1 GPU (recorded there as off / 0 / fp32), so, like the NCCL
    // settings, they pair N-GPU configurations with each other but never keep one from its 1-GPU baseline.
    all.push_back({"overlap"});
    all.push_back({"overlap_order"});
    all.push_back({"bucket_mb"});
    all.push_back({"grad_dtype"});
    // The fused optimizer (schema_version 4) is the reverse: a 1-GPU-only way of running the step (recorded off with
    // more GPUs). compare keeps fused and unfused runs apart; the scaling table does not, so a 1-GPU baseline run
    // either way still pairs with its N-GPU configurations.
    all.push_back({"fused_optimizer"});
    // gemm_tuning (schema_version 6) pairs nothing apart: how the GEMM algorithms were chosen is what a comparison
    // of two builds may well be about, and it is recorded in the files.
    return all;
  }();
  return attributes;
}

bool is_nccl_setting(const IdentityAttribute& attribute) {
  return std::strcmp(attribute.name, "nccl_algo") == 0 || std::strcmp(attribute.name, "nccl_proto") == 0;
}

namespace {

// The texts of a default ConfigurationMetadata: what a file that lacks an attribute added after schema_version 1
// implies (results_schema.hpp: the struct's defaults are what a version-1 run did).
const std::map<std::string, std::string>& defaults() {
  static const std::map<std::string, std::string> texts = attribute_texts(ConfigurationMetadata{});
  return texts;
}

bool has_default(const char* name) { return results_schema::attribute_added_in(name) > 1; }

}  // namespace

std::string attribute_or_default(const ConfigurationResults& configuration, const IdentityAttribute& attribute) {
  const auto found = configuration.attribute_text.find(attribute.name);
  if (found != configuration.attribute_text.end()) return found->second;
  return has_default(attribute.name) ? defaults().at(attribute.name) : "";
}

std::vector<std::string> identity_key(const ConfigurationResults& configuration,
                                      const std::vector<IdentityAttribute>& attributes) {
  std::vector<std::string> key;
  key.reserve(attributes.size());
  for (const IdentityAttribute& attribute : attributes) key.push_back(attribute_or_default(configuration, attribute));
  return key;
}

std::string configuration_label(const ConfigurationResults& configuration) {
  std::string label = configuration.metadata.name;
  const auto nccl_setting = [&](const char* name) {
    const auto found = configuration.attribute_text.find(name);
    return found != configuration.attribute_text.end() ? found->second : std::string(results_schema::kNcclDefault);
  };
  const std::string algo = nccl_setting("nccl_algo");
  const std::string proto = nccl_setting("nccl_proto");
  if (algo != results_schema::kNcclDefault || proto != results_schema::kNcclDefault)
    label += " nccl " + algo + "/" + proto;
  for (const IdentityAttribute& attribute : comparison_identity_attributes()) {
    if (!has_default(attribute.name)) continue;
    const std::string value = attribute_or_default(configuration, attribute);
    // Both timings that give the phase breakdown go unremarked: events (every run marked, the default of files
    // before schema_version 7) and interleaved (mgpu_bench's default since).
    if (std::strcmp(attribute.name, "timing") == 0 && value == "interleaved") continue;
    if (value != defaults().at(attribute.name)) label += std::string(" ") + attribute.name + "=" + value;
  }
  return label;
}

}  // namespace mgpu::analysis
