// Purpose: record_configuration and configuration_from (configuration_record.hpp).
#include "results/configuration_record.hpp"

#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "platform/error.hpp"

namespace mgpu {
namespace {

const char* name_of(Precision p) { return precision_name(p); }
const char* name_of(GradDtype d) { return grad_dtype_name(d); }
const char* name_of(TimingMode t) { return timing_name(t); }

template <typename Enum>
Enum enum_from_name(const std::string& text, const char* attribute) {
  constexpr int kMostValues = 8;  // no setting's enum has more
  for (int i = 0; i < kMostValues; ++i) {
    const Enum candidate = static_cast<Enum>(i);
    if (text == name_of(candidate)) return candidate;
  }
  throw UsageError(std::string("attribute ") + attribute + ": '" + text + "' is no value of this setting");
}

// A setting into its attribute: bool as "on"/"off", an enum as its name, a number as the attribute's type.
template <typename Field, typename Value>
bool write_attribute(Field& field, const Value& value) {
  if constexpr (std::is_same_v<Value, bool> && std::is_same_v<Field, std::string>) {
    field = value ? "on" : "off";
    return true;
  } else if constexpr (std::is_enum_v<Value> && std::is_same_v<Field, std::string>) {
    field = name_of(value);
    return true;
  } else if constexpr (std::is_arithmetic_v<Value> && std::is_arithmetic_v<Field> && !std::is_same_v<Value, bool>) {
    field = static_cast<Field>(value);
    return true;
  } else {
    return false;
  }
}

template <typename Value, typename Field>
bool read_attribute(Value& value, const Field& field, const char* attribute) {
  if constexpr (std::is_same_v<Value, bool> && std::is_same_v<Field, std::string>) {
    if (field != "on" && field != "off")
      throw UsageError(std::string("attribute ") + attribute + ": '" + field + "' is neither on nor off");
    value = field == "on";
    return true;
  } else if constexpr (std::is_enum_v<Value> && std::is_same_v<Field, std::string>) {
    value = enum_from_name<Value>(field, attribute);
    return true;
  } else if constexpr (std::is_arithmetic_v<Value> && std::is_arithmetic_v<Field> && !std::is_same_v<Value, bool>) {
    value = static_cast<Value>(field);
    return true;
  } else {
    return false;
  }
}

// Calls `use` with the attribute of `meta` named `name`; a setting without an attribute of its name and a fitting type
// is a programming error (the round-trip test finds it).
template <typename Meta, typename Use>
void with_attribute(Meta& meta, const char* name, Use&& use) {
  bool used = false;
  for_each_attribute_of_configuration(meta, [&](const char* attribute, auto& field) {
    if (std::strcmp(attribute, name) == 0) used = use(field);
  });
  if (!used) throw std::logic_error(std::string("setting '") + name + "' has no results attribute of a fitting type");
}

}  // namespace

void record_configuration(const Configuration& configuration, const std::string& device,
                          results_schema::ConfigurationMetadata& meta) {
  for_each_recorded_setting(configuration, [&](const char* name, const auto& value) {
    with_attribute(meta, name, [&](auto& field) { return write_attribute(field, value); });
  });
  const TrainingSettings& t = configuration.training;
  meta.name = configuration.name(device);
  meta.device = device;
  meta.model = t.model.name;
  meta.layer_widths.assign(t.model.widths.begin(), t.model.widths.end());
  meta.dropout = t.model.dropout;
  meta.parameter_count = static_cast<std::int64_t>(t.model.parameter_count());
  meta.dense_weight_count = static_cast<std::int64_t>(t.model.dense_weight_count());
  meta.local_batch = t.global_batch / configuration.gpus;
  // What exists only with overlap on, and GEMM tuning only where GEMMs are tuned, read "n/a" or 0 otherwise.
  meta.overlap_order = t.overlap ? weight_gradient_order_name(t.overlap_order) : results_schema::kNotApplicable;
  meta.bucket_mb = t.overlap ? t.bucket_mb : 0.0;
  meta.gemm_tuning = device == "cuda" ? gemm_tuning_name(t.gemm_tuning) : results_schema::kNotApplicable;
}

Configuration configuration_from(const results_schema::ConfigurationMetadata& meta) {
  Configuration configuration;
  for_each_recorded_setting(configuration, [&](const char* name, auto& value) {
    with_attribute(meta, name, [&](const auto& field) { return read_attribute(value, field, name); });
  });
  TrainingSettings& t = configuration.training;
  const std::vector<int> widths(meta.layer_widths.begin(), meta.layer_widths.end());
  t.model = meta.model == "custom" ? custom_model(widths, meta.dropout) : preset_model(meta.model);
  t.model.dropout = meta.dropout;
  t.runs = t.timing == TimingMode::interleaved ? interleaved_run_count(configuration.runs_requested)
                                               : configuration.runs_requested;
  if (t.overlap) {
    t.overlap_order =
        meta.overlap_order == "layerwise" ? WeightGradientOrder::layerwise : WeightGradientOrder::deferred;
    t.bucket_mb = meta.bucket_mb;
  }
  t.gemm_tuning = meta.gemm_tuning == "step"   ? GemmTuning::step
                  : meta.gemm_tuning == "plan" ? GemmTuning::plan
                                               : GemmTuning::alone;
  return configuration;
}

}  // namespace mgpu
