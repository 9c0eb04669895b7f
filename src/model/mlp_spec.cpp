// Purpose: presets (presets.def), validation and parameter layout of the benchmarked MLP.
#include "model/mlp_spec.hpp"

#include <sstream>

#include "platform/error.hpp"
#include "platform/number_text.hpp"

namespace mgpu {

std::vector<DenseLayer> MlpSpec::layers() const {
  std::vector<DenseLayer> result;
  std::size_t offset = 0;
  for (int l = 0; l < layer_count(); ++l) {
    DenseLayer layer;
    layer.fan_in = widths[l];
    layer.fan_out = widths[l + 1];
    layer.hidden = (l + 1 < layer_count());
    layer.weight_offset = offset;
    offset += layer.weight_count();
    layer.bias_offset = offset;
    offset += layer.bias_count();
    result.push_back(layer);
  }
  return result;
}

std::size_t MlpSpec::parameter_count() const {
  std::size_t count = 0;
  for (const DenseLayer& layer : layers()) count += layer.weight_count() + layer.bias_count();
  return count;
}

std::size_t MlpSpec::dense_weight_count() const {
  std::size_t count = 0;
  for (const DenseLayer& layer : layers()) count += layer.weight_count();
  return count;
}

int MlpSpec::max_width() const {
  int widest = 0;
  for (int w : widths) widest = w > widest ? w : widest;
  return widest;
}

std::string MlpSpec::widths_string() const {
  std::string text;
  for (std::size_t i = 0; i < widths.size(); ++i) text += (i ? "-" : "") + std::to_string(widths[i]);
  return text;
}

MlpSpec custom_model(const std::vector<int>& widths, double dropout) {
  if (widths.size() < 2) throw UsageError("--layers needs at least an input and an output width");
  // Dropout masks are keyed by an 8-bit layer index (synthetic_data.hpp).
  if (widths.size() > 256) {
    throw UsageError("--layers: " + std::to_string(widths.size() - 1) + " layers; at most 255 are supported");
  }
  for (int w : widths) {
    if (w <= 0) throw UsageError("--layers: width " + std::to_string(w) + " must be positive");
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw UsageError("--dropout " + std::to_string(dropout) + ": must be in [0, 1)");
  }
  return MlpSpec{"custom", widths, dropout};
}

const std::vector<MlpSpec>& model_presets() {
  // The widths' braces are the preset's list of widths (presets.def).
#define MGPU_PRESET(name, dropout, ...) MlpSpec{#name, {__VA_ARGS__}, dropout},
  static const std::vector<MlpSpec> presets = {
#include "model/presets.def"
  };
#undef MGPU_PRESET
  return presets;
}

const MlpSpec* find_preset(const std::string& name) {
  for (const MlpSpec& preset : model_presets())
    if (preset.name == name) return &preset;
  return nullptr;
}

MlpSpec preset_model(const std::string& name) {
  if (const MlpSpec* preset = find_preset(name)) return *preset;
  std::string names;
  const std::vector<std::string> all = preset_names();
  for (std::size_t i = 0; i < all.size(); ++i) names += (i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + all[i];
  throw UsageError("--model '" + name + "': unknown model (choose " + names + ", or give --layers)");
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const MlpSpec& preset : model_presets()) names.push_back(preset.name);
  return names;
}

std::string preset_list_text() {
  std::string text;
  for (const MlpSpec& preset : model_presets()) {
    text += (text.empty() ? "" : ", ") + preset.name + " (" + with_thousands(preset.parameter_count()) + " parameters" +
            (preset.name == kDefaultPreset ? "; the default)" : ")");
  }
  return text;
}

std::vector<int> parse_layer_widths(const std::string& text) {
  std::vector<int> widths;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    std::size_t used = 0;
    long value = 0;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value <= 0 || value > (1L << 24)) {
      throw UsageError("--layers '" + text + "': '" + item + "' is not a positive width");
    }
    widths.push_back(static_cast<int>(value));
  }
  if (widths.size() < 2 || (!text.empty() && text.back() == ',')) {
    throw UsageError("--layers '" + text + "': give at least two comma-separated widths (input,...,output)");
  }
  return widths;
}

}  // namespace mgpu
