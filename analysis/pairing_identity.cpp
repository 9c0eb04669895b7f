// Purpose: identity keys of configurations, defined once.
#include "pairing_identity.hpp"

#include <cstring>

namespace mgpu::analysis {

const std::vector<IdentityAttribute>& scaling_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = {
      {"model", nullptr},
      {"layer_widths", nullptr},
      {"dropout", nullptr},
      {"global_batch", nullptr},
      {"batch_mode", nullptr},
      {"device", nullptr},
      {"precision", nullptr},
      {"warmup_steps", nullptr},
      {"measured_steps", nullptr},
      {"seed", nullptr},
      {"adam_learning_rate", nullptr},
      {"adam_beta1", nullptr},
      {"adam_beta2", nullptr},
      {"adam_epsilon", nullptr},
      // Added in schema_version 2 (HELPERS.md, schema coordination); the defaults are what a version-1 run did.
      {"graph", "off"},
      {"accumulate_steps", "1"},
      {"timing", "events"},
      {"implementation", "mgpu_bench"},
  };
  return attributes;
}

const std::vector<IdentityAttribute>& comparison_identity_attributes() {
  static const std::vector<IdentityAttribute> attributes = [] {
    std::vector<IdentityAttribute> all = scaling_identity_attributes();
    all.push_back({"ranks", nullptr});
    all.push_back({"nccl_algo", nullptr});
    all.push_back({"nccl_proto", nullptr});
    all.push_back({"environment_preset", "none"});
    // How the gradients are reduced: meaningless on 1 GPU (recorded there as off / 0 / fp32), so, like the NCCL
    // settings, they pair N-GPU configurations with each other but never keep one from its 1-GPU baseline.
    all.push_back({"overlap", "off"});
    all.push_back({"bucket_mb", "0"});
    all.push_back({"grad_dtype", "fp32"});
    return all;
  }();
  return attributes;
}

bool is_nccl_setting(const IdentityAttribute& attribute) {
  return std::strcmp(attribute.name, "nccl_algo") == 0 || std::strcmp(attribute.name, "nccl_proto") == 0;
}

std::string attribute_or_default(const ConfigurationResults& configuration, const IdentityAttribute& attribute) {
  const auto found = configuration.attribute_text.find(attribute.name);
  if (found != configuration.attribute_text.end()) return found->second;
  return attribute.default_text != nullptr ? attribute.default_text : "";
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
  const std::string algo = attribute_or_default(configuration, {"nccl_algo", "default"});
  const std::string proto = attribute_or_default(configuration, {"nccl_proto", "default"});
  if (algo != "default" || proto != "default") label += " nccl " + algo + "/" + proto;
  for (const IdentityAttribute& attribute : comparison_identity_attributes()) {
    if (attribute.default_text == nullptr) continue;
    const std::string value = attribute_or_default(configuration, attribute);
    if (value != attribute.default_text) label += std::string(" ") + attribute.name + "=" + value;
  }
  return label;
}

}  // namespace mgpu::analysis
