// Purpose: tests of the model presets (exact parameter counts from docs/measurement.md), layout and --layers parsing.
#include <gtest/gtest.h>

#include "model/mlp_spec.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

TEST(MlpSpec, PresetParameterCountsAreTheStudysExactly) {
  EXPECT_EQ(preset_model("medium").parameter_count(), 258432u);
  EXPECT_EQ(preset_model("large").parameter_count(), 6885376u);
}

TEST(MlpSpec, PresetsHaveTheStudysDropout) {
  EXPECT_DOUBLE_EQ(preset_model("medium").dropout, 0.2);
  EXPECT_DOUBLE_EQ(preset_model("large").dropout, 0.3);
}

TEST(MlpSpec, LayoutIsContiguousWithBiasFreeOutput) {
  const MlpSpec model = custom_model({5, 4, 3, 2}, 0.0);
  const std::vector<DenseLayer> layers = model.layers();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].weight_offset, 0u);
  EXPECT_EQ(layers[0].bias_offset, 20u);
  EXPECT_EQ(layers[1].weight_offset, 24u);
  EXPECT_EQ(layers[1].bias_offset, 36u);
  EXPECT_EQ(layers[2].weight_offset, 39u);
  EXPECT_FALSE(layers[2].hidden);
  EXPECT_EQ(layers[2].bias_count(), 0u);
  EXPECT_EQ(model.parameter_count(), 45u);
  EXPECT_EQ(model.dense_weight_count(), 20u + 12u + 6u);
}

TEST(MlpSpec, ParsesLayerWidths) {
  EXPECT_EQ(parse_layer_widths("50,256,128,64,3"), (std::vector<int>{50, 256, 128, 64, 3}));
}

TEST(MlpSpec, RejectsBadWidthsNamingThem) {
  for (const char* bad : {"", "50", "50,,3", "50,-3", "50,x", "50,3,", "0,3", "50,3.5"}) {
    try {
      parse_layer_widths(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--layers"), std::string::npos) << e.what();
    }
  }
}

TEST(MlpSpec, RejectsUnknownPresetAndBadDropout) {
  EXPECT_THROW(preset_model("huge"), UsageError);
  EXPECT_THROW(custom_model({4, 2}, 1.0), UsageError);
  EXPECT_THROW(custom_model({4, 2}, -0.1), UsageError);
}

}  // namespace
}  // namespace mgpu
