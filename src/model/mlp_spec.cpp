// Purpose: presets, validation and parameter layout of the benchmarked MLP.
#include "model/mlp_spec.hpp"

#include <sstream>

#include "platform/error.hpp"

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

MlpSpec preset_model(const std::string& name) {
  // docs/measurement.md: input widths 847 and 4800 with a bias-free output layer of width 3 reproduce the study's
  // stated parameter counts (258,432 and 6,885,376) exactly.
  if (name == "medium") return MlpSpec{"medium", {847, 256, 128, 64, 3}, 0.2};
  if (name == "large") return MlpSpec{"large", {4800, 1024, 1024, 512, 512, 256, 3}, 0.3};
  throw UsageError("--model '" + name + "': unknown model (choose medium or large, or give --layers)");
}

std::vector<std::string> preset_names() { return {"medium", "large"}; }

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
