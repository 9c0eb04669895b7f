// Purpose: tests of the persistent step's plan and geometry on the CPU (train/persistent_plan.hpp,
// kernels/persistent_tiles.hpp): the limits it serves and refuses, pinned at their boundaries; the phase list; that the
// tiles, the threads' shares, the staged copies and the update's tile list each cover their outputs exactly once; and
// every product, computed on the host through the kernel's own index functions in the kernel's order (staging, each
// part's sums, the tree over the parts), against the float64 product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/persistent_tiles.hpp"
#include "platform/error.hpp"
#include "train/persistent_plan.hpp"

namespace mgpu {
namespace {

using kernels::ProductTiling;

constexpr int kEdges[] = {4, 8, 16, 32, 64, 128};

// Every tile shape the planner may choose.
std::vector<std::pair<int, int>> tile_shapes() {
  std::vector<std::pair<int, int>> shapes;
  for (int rows : kEdges)
    for (int columns : kEdges)
      if ((rows / 4) * (columns / 4) <= kernels::kPersistentThreads) shapes.emplace_back(rows, columns);
  return shapes;
}

// --- Limits ---

TEST(PersistentPlanLimits, ServesThePresetsUpToTheLargestBatch) {
  for (int batch : {1, 8, 13, 32, 64, kPersistentMaxBatch}) {
    EXPECT_EQ(persistent_step_refusal(preset_model("medium"), batch), "") << batch;
    EXPECT_EQ(persistent_step_refusal(preset_model("large"), batch), "") << batch;
  }
  // x and targets, both dL/dZ and activations of each hidden layer, y and dL/dy: (847 + 3 x 3 + 2 x 448) floats a
  // sample.
  EXPECT_EQ(persistent_activation_bytes(preset_model("medium"), 8), std::size_t{1752} * 8 * 4);
}

TEST(PersistentPlanLimits, RefusesPastEachLimitInOneLineNamingIt) {
  const MlpSpec medium = preset_model("medium");
  const auto refused = [](const MlpSpec& model, int batch, const std::string& naming) {
    const std::string reason = persistent_step_refusal(model, batch);
    EXPECT_NE(reason.find(naming), std::string::npos) << reason;
    EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  };
  refused(medium, kPersistentMaxBatch + 1, "local batch 129");
  refused(medium, 0, "local batch 0");
  refused(custom_model({10, 3}, 0.0), 8, "no hidden layer");
  // Outputs: 16 served, 17 refused.
  EXPECT_EQ(persistent_step_refusal(custom_model({10, 8, kernels::kPersistentMaxOutputs}, 0.0), 8), "");
  refused(custom_model({10, 8, kernels::kPersistentMaxOutputs + 1}, 0.0), 8, "17 outputs");
  // Layers: 16 served, 17 refused.
  std::vector<int> widths(kernels::kPersistentMaxLayers + 1, 6);
  EXPECT_EQ(persistent_step_refusal(custom_model(widths, 0.0), 8), "");
  widths.push_back(6);
  refused(custom_model(widths, 0.0), 8, "17 layers");
  // Activations: (input + 2 x 4 + 3 x 3) floats a sample at batch 128 reach 16 MiB exactly at input 32751.
  const int at_limit = static_cast<int>(kPersistentMaxActivationBytes / (4 * 128)) - 17;
  EXPECT_EQ(persistent_activation_bytes(custom_model({at_limit, 4, 3}, 0.0), 128), kPersistentMaxActivationBytes);
  EXPECT_EQ(persistent_step_refusal(custom_model({at_limit, 4, 3}, 0.0), 128), "");
  refused(custom_model({at_limit + 1, 4, 3}, 0.0), 128, "keeps on chip");
}

// --- The plan ---

void expect_valid_tiling(const ProductTiling& t, int rows, int columns, int depth, const std::string& what) {
  EXPECT_EQ(t.rows, rows) << what;
  EXPECT_EQ(t.columns, columns) << what;
  EXPECT_EQ(t.depth, depth) << what;
  bool edge_rows = false, edge_columns = false;
  for (int edge : kEdges) {
    edge_rows = edge_rows || t.tile_rows == edge;
    edge_columns = edge_columns || t.tile_columns == edge;
  }
  EXPECT_TRUE(edge_rows && edge_columns) << what << ": tile " << t.tile_rows << "x" << t.tile_columns;
  EXPECT_LE(kernels::threads_per_part(t), kernels::kPersistentThreads) << what;
  EXPECT_EQ(kernels::part_count(t) * kernels::threads_per_part(t), kernels::kPersistentThreads) << what;
  EXPECT_GE(t.chunk, 1) << what;
  EXPECT_LE(t.chunk, depth) << what;
  EXPECT_LE(kernels::staging_floats(t), kPersistentSharedBudgetFloats) << what;
}

using Kind = kernels::PersistentPhaseKind;

void expect_phases(const std::vector<kernels::PersistentPhase>& phases,
                   const std::vector<std::pair<Kind, int>>& expected, const std::string& what) {
  ASSERT_EQ(phases.size(), expected.size()) << what;
  for (std::size_t p = 0; p < expected.size(); ++p) {
    EXPECT_EQ(phases[p].kind, expected[p].first) << what << ", phase " << p;
    EXPECT_EQ(phases[p].layer, expected[p].second) << what << ", phase " << p;
  }
}

bool same_tiling(const ProductTiling& a, const ProductTiling& b) {
  return a.rows == b.rows && a.columns == b.columns && a.depth == b.depth && a.tile_rows == b.tile_rows &&
         a.tile_columns == b.tile_columns && a.chunk == b.chunk;
}

// The one-launch list is the marked list with the last hidden layer's forward, the head and its input gradient joined
// into one tail phase of the same tilings (so both compute the same bits), or the marked list itself. Returns whether
// it holds a tail.
bool expect_tail_joins_the_marked_phases(const PersistentPlan& plan, int layers, const std::string& what) {
  const int hidden = layers - 2;
  const bool with_gradient = hidden >= 1;
  if (plan.phases.size() == plan.marked_phases.size()) {
    for (std::size_t p = 0; p < plan.phases.size(); ++p) {
      EXPECT_EQ(plan.phases[p].kind, plan.marked_phases[p].kind) << what;
      EXPECT_TRUE(same_tiling(plan.phases[p].tiling, plan.marked_phases[p].tiling)) << what;
    }
    return false;
  }
  EXPECT_EQ(plan.phases.size() + (with_gradient ? 2 : 1), plan.marked_phases.size()) << what;
  const kernels::PersistentPhase& tail = plan.phases[static_cast<std::size_t>(hidden)];
  EXPECT_EQ(tail.kind, Kind::tail) << what;
  EXPECT_EQ(tail.layer, hidden) << what;
  EXPECT_EQ(kernels::column_tiles(tail.tiling), 1) << what << ": the tail's forward covers every unit";
  const kernels::PersistentPhase& forward = plan.marked_phases[static_cast<std::size_t>(hidden)];
  EXPECT_EQ(forward.kind, Kind::forward) << what;
  EXPECT_TRUE(same_tiling(forward.tiling, tail.tiling)) << what;
  if (with_gradient) {
    const kernels::PersistentPhase& gradient = plan.marked_phases[static_cast<std::size_t>(hidden) + 2];
    EXPECT_EQ(gradient.kind, Kind::input_gradient) << what;
    EXPECT_EQ(gradient.layer, hidden) << what;
    EXPECT_TRUE(same_tiling(gradient.tiling, tail.gradient_tiling)) << what;
    // The kernel's tail takes, for forward row tile r, input-gradient tiles r * columns + c: the same samples.
    const int columns = kernels::column_tiles(tail.gradient_tiling);
    EXPECT_EQ(kernels::row_tiles(tail.gradient_tiling), kernels::row_tiles(tail.tiling)) << what;
    for (int row_tile = 0; row_tile < kernels::row_tiles(tail.tiling); ++row_tile) {
      for (int column = 0; column < columns; ++column) {
        const kernels::TileOrigin origin = kernels::tile_origin(tail.gradient_tiling, row_tile * columns + column);
        EXPECT_EQ(origin.row, kernels::tile_origin(tail.tiling, row_tile).row) << what;
        EXPECT_EQ(origin.column, column * tail.gradient_tiling.tile_columns) << what;
      }
    }
  }
  return true;
}

TEST(PersistentPlanPhases, MediumRunsForwardHeadInputGradientsAndTheUpdate) {
  const MlpSpec model = preset_model("medium");
  for (int batch : {1, 8, 64, 128}) {
    const PersistentPlan plan = plan_persistent_step(model, batch, 132);
    const std::string what = "medium batch " + std::to_string(batch);
    expect_phases(plan.marked_phases,
                  {{Kind::forward, 0},
                   {Kind::forward, 1},
                   {Kind::forward, 2},
                   {Kind::head, 3},
                   {Kind::input_gradient, 2},
                   {Kind::input_gradient, 1},
                   {Kind::update, 0}},
                  what);
    EXPECT_EQ(plan.forward_end, 4);
    EXPECT_EQ(plan.backward_end, 6);
    // Medium's last hidden layer is 64 units wide: the tail saves two grid barriers.
    EXPECT_TRUE(expect_tail_joins_the_marked_phases(plan, model.layer_count(), what));
    expect_phases(
        plan.phases,
        {{Kind::forward, 0}, {Kind::forward, 1}, {Kind::tail, 2}, {Kind::input_gradient, 1}, {Kind::update, 0}}, what);
    const std::vector<DenseLayer> layers = model.layers();
    int most = kernels::kPartSumFloats;
    for (const kernels::PersistentPhase& phase : plan.marked_phases) {
      const DenseLayer& layer = layers[phase.layer];
      const std::string what = "batch " + std::to_string(batch) + ", phase of layer " + std::to_string(phase.layer);
      if (phase.kind == Kind::forward) expect_valid_tiling(phase.tiling, batch, layer.fan_out, layer.fan_in, what);
      if (phase.kind == Kind::input_gradient)
        expect_valid_tiling(phase.tiling, batch, layer.fan_in, layer.fan_out, what);
      if (phase.kind == Kind::forward || phase.kind == Kind::input_gradient)
        most = std::max(most, kernels::product_shared_floats(phase.tiling));
    }
    ASSERT_EQ(plan.update_tilings.size(), layers.size());
    for (std::size_t l = 0; l < layers.size(); ++l) {
      expect_valid_tiling(plan.update_tilings[l], layers[l].fan_out, layers[l].fan_in, batch,
                          "update of layer " + std::to_string(l));
      most = std::max(most, kernels::product_shared_floats(plan.update_tilings[l]));
    }
    EXPECT_EQ(plan.shared_floats, most);
    EXPECT_LE(plan.shared_floats, kPersistentSharedBudgetFloats);
  }
}

TEST(PersistentPlanPhases, OneHiddenLayerHasNoBackwardLaunch) {
  const PersistentPlan plan = plan_persistent_step(custom_model({5, 4, 3}, 0.1), 3, 132);
  expect_phases(plan.marked_phases, {{Kind::forward, 0}, {Kind::head, 1}, {Kind::update, 0}}, "5-4-3");
  EXPECT_EQ(plan.forward_end, 2);
  EXPECT_EQ(plan.backward_end, 2);
  expect_tail_joins_the_marked_phases(plan, 2, "5-4-3");
}

// Where the last hidden layer is wider than the widest tile (large: 256 units) its forward cannot feed the head in one
// block: no tail. Elsewhere the tail holds the marked list's tilings whichever the cost model chose.
TEST(PersistentPlanPhases, TheTailOnlyWhereOneTileCoversTheLastHiddenLayer) {
  EXPECT_FALSE(expect_tail_joins_the_marked_phases(plan_persistent_step(preset_model("large"), 8, 132), 6, "large"));
  for (const std::vector<int>& widths :
       {std::vector<int>{33, 20, 16}, std::vector<int>{50, 40, 30, 3}, std::vector<int>{4800, 64, 3},
        std::vector<int>{21, 9, 9, 9, 9, 5}, std::vector<int>{100, 128, 128, 2}, std::vector<int>{100, 129, 7}}) {
    const MlpSpec model = custom_model(widths, 0.1);
    for (int batch : {1, 13, 128})
      expect_tail_joins_the_marked_phases(plan_persistent_step(model, batch, 132), model.layer_count(),
                                          model.widths_string() + " batch " + std::to_string(batch));
  }
}

TEST(PersistentPlanPhases, TheSameInputsGiveTheSamePlan) {
  const PersistentPlan a = plan_persistent_step(preset_model("large"), 32, 132);
  const PersistentPlan b = plan_persistent_step(preset_model("large"), 32, 132);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  ASSERT_EQ(a.marked_phases.size(), b.marked_phases.size());
  for (std::size_t p = 0; p < a.marked_phases.size(); ++p)
    EXPECT_TRUE(same_tiling(a.marked_phases[p].tiling, b.marked_phases[p].tiling)) << p;
  EXPECT_EQ(a.shared_floats, b.shared_floats);
}

TEST(PersistentPlanPhases, RefusedModelsHaveNoPlan) {
  EXPECT_THROW(plan_persistent_step(preset_model("medium"), kPersistentMaxBatch + 1, 132), Error);
}

// --- The geometry: every index function covers its range exactly once ---

ProductTiling tiling(int rows, int columns, int depth, int tile_rows, int tile_columns, int chunk) {
  ProductTiling t;
  t.rows = rows;
  t.columns = columns;
  t.depth = depth;
  t.tile_rows = tile_rows;
  t.tile_columns = tile_columns;
  t.chunk = chunk;
  return t;
}

TEST(PersistentTileGeometry, TheThreadsOfABlockShareEachTileOutputOncePerPart) {
  for (const auto& [tile_rows, tile_columns] : tile_shapes()) {
    const ProductTiling t = tiling(100, 100, 10, tile_rows, tile_columns, 10);
    const int parts = kernels::part_count(t);
    std::vector<int> seen(static_cast<std::size_t>(parts) * kernels::tile_outputs(t), 0);
    for (int thread = 0; thread < kernels::kPersistentThreads; ++thread) {
      const kernels::ThreadRole role = kernels::thread_role(t, thread);
      ASSERT_EQ(role.parts, parts);
      ASSERT_LT(role.part, parts);
      for (int i = 0; i < kernels::kMicroTile; ++i)
        for (int j = 0; j < kernels::kMicroTile; ++j)
          ++seen[static_cast<std::size_t>(role.part) * kernels::tile_outputs(t) + kernels::role_output(t, role, i, j)];
    }
    for (std::size_t slot = 0; slot < seen.size(); ++slot)
      ASSERT_EQ(seen[slot], 1) << tile_rows << "x" << tile_columns << " slot " << slot;
  }
}

TEST(PersistentTileGeometry, TilesCoverTheProductOnce) {
  for (const auto& [tile_rows, tile_columns] : tile_shapes()) {
    const ProductTiling t = tiling(37, 131, 5, tile_rows, tile_columns, 5);
    std::vector<int> seen(37 * 131, 0);
    for (int tile = 0; tile < kernels::tile_count(t); ++tile) {
      const kernels::TileOrigin origin = kernels::tile_origin(t, tile);
      for (int o = 0; o < kernels::tile_outputs(t); ++o) {
        const kernels::TileOrigin at = kernels::output_position(t, origin, o);
        if (at.row < t.rows && at.column < t.columns) ++seen[static_cast<std::size_t>(at.row) * 131 + at.column];
      }
    }
    for (int count : seen) ASSERT_EQ(count, 1) << tile_rows << "x" << tile_columns;
  }
}

TEST(PersistentTileGeometry, StagedCopiesFillTheChunkOnceAndReadOnlyInside) {
  for (bool k_contiguous : {true, false}) {
    for (int tile : kEdges) {
      for (int depth : {1, 3, 32, 45}) {
        const int leading = 300;
        const kernels::Operand operand{nullptr, leading, k_contiguous};
        const int first = 2 * tile, extent = 2 * tile + tile / 2 + 1, k0 = 7;
        std::vector<int> seen(static_cast<std::size_t>(depth) * kernels::staged_stride(tile), 0);
        for (int e = 0; e < tile * depth; ++e) {
          const kernels::StagedCopy copy = kernels::staged_copy(operand, tile, first, extent, k0, depth, e);
          ASSERT_GE(copy.destination, 0);
          ASSERT_LT(copy.destination, static_cast<int>(seen.size()));
          ++seen[static_cast<std::size_t>(copy.destination)];
          const int index = copy.destination % kernels::staged_stride(tile);
          const int k = copy.destination / kernels::staged_stride(tile);
          ASSERT_LT(index, tile);  // the pad column is never written
          EXPECT_EQ(copy.loads, first + index < extent);
          if (copy.loads) {
            const std::size_t expected = k_contiguous ? static_cast<std::size_t>(first + index) * leading + k0 + k
                                                      : static_cast<std::size_t>(k0 + k) * leading + first + index;
            EXPECT_EQ(copy.source, expected);
          }
        }
        for (std::size_t d = 0; d < seen.size(); ++d)
          ASSERT_EQ(seen[d], d % kernels::staged_stride(tile) < static_cast<std::size_t>(tile) ? 1 : 0);
      }
    }
  }
}

TEST(PersistentTileGeometry, TheUpdateListsEveryTileOfEveryLayer) {
  const ProductTiling layers[] = {tiling(256, 847, 8, 32, 64, 8), tiling(3, 64, 8, 4, 64, 8),
                                  tiling(128, 256, 8, 16, 16, 8)};
  int item = 0;
  for (int l = 0; l < 3; ++l) {
    for (int tile = 0; tile < kernels::tile_count(layers[l]); ++tile, ++item) {
      const kernels::LayerTile at = kernels::locate_update_tile(layers, 3, item);
      ASSERT_EQ(at.layer, l);
      ASSERT_EQ(at.tile, tile);
    }
  }
  EXPECT_EQ(kernels::locate_update_tile(layers, 3, item).layer, 3);
}

// --- The products, computed as the kernel computes them ---

// The kernel's multiply_tile and combine_and_store on the host: each chunk staged through staged_copy into a
// shared-memory image, each thread's 4 x 4 sums over its part's K values (fmaf, in K order), the parts added by the
// tree; out[row * columns + column] for every output (NaN where none is written).
std::vector<float> emulated_product(const ProductTiling& t, const kernels::ProductOperands& operands) {
  std::vector<float> out(static_cast<std::size_t>(t.rows) * t.columns, std::nanf(""));
  std::vector<float> shared(static_cast<std::size_t>(kernels::product_shared_floats(t)), std::nanf(""));
  const int row_stride = kernels::staged_stride(t.tile_rows);
  const int column_stride = kernels::staged_stride(t.tile_columns);
  const auto stage = [&](float* staged, int tile, const kernels::Operand& operand, int first, int extent, int k0,
                         int depth) {
    for (int e = 0; e < tile * depth; ++e) {
      const kernels::StagedCopy copy = kernels::staged_copy(operand, tile, first, extent, k0, depth, e);
      staged[copy.destination] = copy.loads ? operand.base[copy.source] : 0.0f;
    }
  };
  for (int tile = 0; tile < kernels::tile_count(t); ++tile) {
    const kernels::TileOrigin origin = kernels::tile_origin(t, tile);
    std::vector<float> sums(static_cast<std::size_t>(kernels::kPersistentThreads) * 16, 0.0f);
    for (int k0 = 0; k0 < t.depth; k0 += t.chunk) {
      const int depth = std::min(t.chunk, t.depth - k0);
      float* staged_rows = shared.data();
      float* staged_columns = shared.data() + t.chunk * row_stride;
      stage(staged_rows, t.tile_rows, operands.rows, origin.row, t.rows, k0, depth);
      stage(staged_columns, t.tile_columns, operands.columns, origin.column, t.columns, k0, depth);
      for (int thread = 0; thread < kernels::kPersistentThreads; ++thread) {
        const kernels::ThreadRole role = kernels::thread_role(t, thread);
        float* own = &sums[static_cast<std::size_t>(thread) * 16];
        for (int k = role.part; k < depth; k += role.parts)
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
              own[i * 4 + j] =
                  std::fma(staged_rows[k * row_stride + role.row + i * role.row_step],
                           staged_columns[k * column_stride + role.column + j * role.column_step], own[i * 4 + j]);
      }
    }
    const int outputs = kernels::tile_outputs(t);
    for (int thread = 0; thread < kernels::kPersistentThreads; ++thread) {
      const kernels::ThreadRole role = kernels::thread_role(t, thread);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          shared[static_cast<std::size_t>(role.part) * outputs + kernels::role_output(t, role, i, j)] =
              sums[static_cast<std::size_t>(thread) * 16 + i * 4 + j];
    }
    for (int half = kernels::part_count(t) / 2; half > 0; half /= 2)
      for (int e = 0; e < half * outputs; ++e) shared[e] += shared[e + half * outputs];
    for (int o = 0; o < outputs; ++o) {
      const kernels::TileOrigin at = kernels::output_position(t, origin, o);
      if (at.row < t.rows && at.column < t.columns) {
        float& slot = out[static_cast<std::size_t>(at.row) * t.columns + at.column];
        EXPECT_TRUE(std::isnan(slot)) << "output (" << at.row << ", " << at.column << ") written twice";
        slot = shared[o];
      }
    }
  }
  return out;
}

std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& v : values) v = value(generator);
  return values;
}

// Which of the step's products: its rows, columns and depth from (batch, fan_in, fan_out), its operands.
enum class Product { forward, input_gradient, weight_gradient };

// The emulated product of `which` for a layer fan_in x fan_out at `batch` against the float64 product of the same
// operands: every output within 16 K 2^-24 of sum |a b| (an index error is off by a whole term).
void expect_emulation_matches(Product which, int batch, int fan_in, int fan_out, int tile_rows, int tile_columns,
                              int chunk) {
  const std::vector<float> x = random_values(static_cast<std::size_t>(batch) * fan_in, 1);
  const std::vector<float> w = random_values(static_cast<std::size_t>(fan_out) * fan_in, 2);
  const std::vector<float> dz = random_values(static_cast<std::size_t>(batch) * fan_out, 3);
  ProductTiling t;
  kernels::ProductOperands operands{};
  // element(r, c, k) of the product as the float64 reference reads it.
  std::function<double(int, int, int)> term;
  switch (which) {
    case Product::forward:
      t = tiling(batch, fan_out, fan_in, tile_rows, tile_columns, chunk);
      operands = kernels::forward_operands(x.data(), w.data(), fan_in);
      term = [&](int b, int o, int i) { return double(x[b * fan_in + i]) * w[o * fan_in + i]; };
      break;
    case Product::input_gradient:
      t = tiling(batch, fan_in, fan_out, tile_rows, tile_columns, chunk);
      operands = kernels::input_gradient_operands(dz.data(), w.data(), fan_in, fan_out);
      term = [&](int b, int i, int o) { return double(dz[b * fan_out + o]) * w[o * fan_in + i]; };
      break;
    case Product::weight_gradient:
      t = tiling(fan_out, fan_in, batch, tile_rows, tile_columns, chunk);
      operands = kernels::weight_gradient_operands(dz.data(), x.data(), fan_in, fan_out);
      term = [&](int o, int i, int b) { return double(dz[b * fan_out + o]) * x[b * fan_in + i]; };
      break;
  }
  const std::vector<float> out = emulated_product(t, operands);
  for (int r = 0; r < t.rows; ++r) {
    for (int c = 0; c < t.columns; ++c) {
      double exact = 0.0, magnitude = 0.0;
      for (int k = 0; k < t.depth; ++k) {
        exact += term(r, c, k);
        magnitude += std::fabs(term(r, c, k));
      }
      const float got = out[static_cast<std::size_t>(r) * t.columns + c];
      ASSERT_LE(std::fabs(got - exact), 16.0 * t.depth * std::ldexp(magnitude, -24) + 1e-30)
          << "product " << static_cast<int>(which) << ", tile " << tile_rows << "x" << tile_columns << ", chunk "
          << chunk << ", output (" << r << ", " << c << ")";
    }
  }
}

TEST(PersistentProducts, EveryTileShapeComputesEachProduct) {
  // Odd sizes (partial tiles on both edges) and a depth of three chunks, the last one short.
  for (const auto& [tile_rows, tile_columns] : tile_shapes()) {
    for (Product which : {Product::forward, Product::input_gradient, Product::weight_gradient})
      expect_emulation_matches(which, 13, 37, 21, tile_rows, tile_columns, 8);
  }
}

TEST(PersistentProducts, ThePlansOfMediumAndACustomModelComputeTheirProducts) {
  for (int batch : {1, 8, 64}) {
    const MlpSpec model = preset_model("medium");
    const PersistentPlan plan = plan_persistent_step(model, batch, 132);
    const std::vector<DenseLayer> layers = model.layers();
    for (const kernels::PersistentPhase& phase : plan.marked_phases) {
      const DenseLayer& layer = layers[phase.layer];
      const ProductTiling& t = phase.tiling;
      if (phase.kind == kernels::PersistentPhaseKind::forward)
        expect_emulation_matches(Product::forward, batch, layer.fan_in, layer.fan_out, t.tile_rows, t.tile_columns,
                                 t.chunk);
      if (phase.kind == kernels::PersistentPhaseKind::input_gradient)
        expect_emulation_matches(Product::input_gradient, batch, layer.fan_in, layer.fan_out, t.tile_rows,
                                 t.tile_columns, t.chunk);
    }
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const ProductTiling& t = plan.update_tilings[l];
      expect_emulation_matches(Product::weight_gradient, batch, layers[l].fan_in, layers[l].fan_out, t.tile_rows,
                               t.tile_columns, t.chunk);
    }
  }
}

TEST(PersistentProducts, ADepthOfSeveralBudgetChunksAtTheWidestTiles) {
  // 128 x 64 tiles stage 211 K values of both operands within the shared-memory budget: a depth of 400 takes two.
  const int chunk = kPersistentSharedBudgetFloats / (kernels::staged_stride(128) + kernels::staged_stride(64));
  ASSERT_LT(chunk, 400);
  EXPECT_LE(kernels::product_shared_floats(tiling(128, 512, 400, 128, 64, chunk)), kPersistentSharedBudgetFloats);
  expect_emulation_matches(Product::forward, 128, 400, 512, 128, 64, chunk);
}

}  // namespace
}  // namespace mgpu
