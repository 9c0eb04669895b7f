// Purpose: the MLP being trained: layer widths, dropout, presets from docs/measurement.md, and the flat parameter
// layout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mgpu {

// One dense layer inside the flat parameter buffer. The weight is [fan_out, fan_in] row-major (as PyTorch stores
// it); hidden layers have a bias and are followed by ReLU + inverted dropout, the output layer has neither.
struct DenseLayer {
  int fan_in = 0;
  int fan_out = 0;
  bool hidden = false;            // bias + ReLU + dropout after it
  std::size_t weight_offset = 0;  // in elements, into the flat parameter buffer
  std::size_t bias_offset = 0;    // valid only for hidden layers
  std::size_t weight_count() const { return static_cast<std::size_t>(fan_in) * fan_out; }
  std::size_t bias_count() const { return hidden ? static_cast<std::size_t>(fan_out) : 0; }
};

struct MlpSpec {
  std::string name;         // "medium", "large" or "custom"
  std::vector<int> widths;  // input, hidden..., output
  double dropout = 0.0;     // drop probability after every hidden layer

  int input_width() const { return widths.front(); }
  int output_width() const { return widths.back(); }
  int layer_count() const { return static_cast<int>(widths.size()) - 1; }
  // Layers in forward order with offsets into the flat buffer [W0, b0, W1, b1, ..., W_last].
  std::vector<DenseLayer> layers() const;
  std::size_t parameter_count() const;
  // Weights of the dense layers only (no biases); the step's FLOPs are step_flops.hpp's.
  std::size_t dense_weight_count() const;
  // Widest activation (for sizing buffers).
  int max_width() const;
  // "4800-1024-...-3"
  std::string widths_string() const;
};

// The presets of docs/measurement.md (presets.def), in order.
const std::vector<MlpSpec>& model_presets();
// The preset a job measures when neither --model nor --layers is given.
inline constexpr char kDefaultPreset[] = "large";
// The preset named `name`; nullptr for any other name.
const MlpSpec* find_preset(const std::string& name);
// The preset named `name`; throws UsageError naming an unknown preset.
MlpSpec preset_model(const std::string& name);
// Any other MLP; throws UsageError for fewer than two widths or a non-positive width.
MlpSpec custom_model(const std::vector<int>& widths, double dropout);
// Parses "50,256,128,64,3"; throws UsageError naming the bad text.
std::vector<int> parse_layer_widths(const std::string& text);
// Names of the presets, for help text and messages.
std::vector<std::string> preset_names();
// The presets as --help lists them: "medium (258,432 parameters), large (6,885,376 parameters; the
// default)".
std::string preset_list_text();

}  // namespace mgpu
