// Purpose: the persistent step's plan (persistent_plan.hpp): its limits, and each product's tiles from a cost model.
#include "train/persistent_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "platform/error.hpp"

namespace mgpu {
namespace {

using kernels::ProductTiling;

// The cost model, in SM cycles of an H100 or H200 (about 2 GHz). It only ranks tile shapes of one product, so rough
// figures do: an SM takes about 64 bytes per cycle from L2 and all SMs together about 3000 (Hopper's L2 delivers 6 to
// 7 TB/s); a block's 4 x 4 register tiles do about 64 FMAs per cycle (two shared-memory loads per four FMAs bound
// them); a staged chunk costs a round trip to L2 and two barriers, and each halving of the parts' sums one barrier.
constexpr double kSmBytesPerCycle = 64;
constexpr double kL2BytesPerCycle = 3000;
constexpr double kFmasPerCycle = 64;
constexpr double kChunkCycles = 1000;
constexpr double kBarrierCycles = 40;
// The optimizer state each weight of the update moves: parameter, first and second moment, read and written.
constexpr double kUpdateBytesPerWeight = 24;

constexpr int kTileEdges[] = {4, 8, 16, 32, 64, 128};

// The smallest tile edge that covers `extent` (at most the largest edge).
int covering_edge(int extent) {
  for (int edge : kTileEdges)
    if (edge >= extent) return edge;
  return kTileEdges[sizeof kTileEdges / sizeof kTileEdges[0] - 1];
}

ProductTiling tiling_of(int rows, int columns, int depth, int tile_rows, int tile_columns) {
  ProductTiling t;
  t.rows = rows;
  t.columns = columns;
  t.depth = depth;
  t.tile_rows = std::min(tile_rows, covering_edge(rows));
  t.tile_columns = std::min(tile_columns, covering_edge(columns));
  const int per_k = kernels::staged_stride(t.tile_rows) + kernels::staged_stride(t.tile_columns);
  t.chunk = std::min(depth, kPersistentSharedBudgetFloats / per_k);
  return t;
}

// One tile's cycles on its SM, and the bytes it takes from L2.
struct TileCost {
  double cycles;
  double bytes;
};
TileCost tile_cost(const ProductTiling& t, double state_bytes_per_output) {
  const double rows = std::min(t.tile_rows, t.rows);
  const double columns = std::min(t.tile_columns, t.columns);
  const double bytes = 4.0 * (rows + columns) * t.depth + state_bytes_per_output * rows * columns;
  const double chunks = kernels::ceil_divide(t.depth, t.chunk);
  const double fmas = static_cast<double>(kernels::tile_outputs(t)) * t.depth;
  const double halvings = std::log2(static_cast<double>(kernels::part_count(t)));
  return {bytes / kSmBytesPerCycle + fmas / kFmasPerCycle + chunks * kChunkCycles + halvings * kBarrierCycles, bytes};
}

// A phase's cycles when its tiles (the products' in order, each product's tiles in tile order) are dealt to `blocks`
// blocks in turn: the busiest block's, or all the bytes at L2's pace where that is longer.
double phase_cycles(const std::vector<ProductTiling>& products, double state_bytes_per_output, int blocks) {
  std::vector<double> busy(static_cast<std::size_t>(blocks), 0.0);
  double bytes = 0.0;
  long long item = 0;
  for (const ProductTiling& t : products) {
    const TileCost cost = tile_cost(t, state_bytes_per_output);
    const int tiles = kernels::tile_count(t);
    for (int tile = 0; tile < tiles; ++tile, ++item) busy[static_cast<std::size_t>(item % blocks)] += cost.cycles;
    bytes += cost.bytes * tiles;
  }
  return std::max(*std::max_element(busy.begin(), busy.end()), bytes / kL2BytesPerCycle);
}

// Calls consider(tile_rows, tile_columns) for every candidate tile shape, in a fixed order.
template <typename Consider>
void for_each_tile_shape(Consider&& consider) {
  for (int tile_rows : kTileEdges) {
    for (int tile_columns : kTileEdges) {
      if ((tile_rows / kernels::kMicroTile) * (tile_columns / kernels::kMicroTile) <= kernels::kPersistentThreads)
        consider(tile_rows, tile_columns);
    }
  }
}

ProductTiling plan_product(int rows, int columns, int depth, int blocks) {
  ProductTiling best;
  double best_cycles = std::numeric_limits<double>::infinity();
  for_each_tile_shape([&](int tile_rows, int tile_columns) {
    const ProductTiling t = tiling_of(rows, columns, depth, tile_rows, tile_columns);
    const double cycles = phase_cycles({t}, 0.0, blocks);
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best = t;
    }
  });
  return best;
}

// The update's products: dW[o, i] of every layer over the batch, one tile shape for all (each clamped to its layer).
std::vector<ProductTiling> update_tilings(const std::vector<DenseLayer>& layers, int batch, int tile_rows,
                                          int tile_columns) {
  std::vector<ProductTiling> tilings;
  for (const DenseLayer& layer : layers)
    tilings.push_back(tiling_of(layer.fan_out, layer.fan_in, batch, tile_rows, tile_columns));
  return tilings;
}

std::vector<ProductTiling> plan_update(const std::vector<DenseLayer>& layers, int batch, int blocks) {
  std::vector<ProductTiling> best;
  double best_cycles = std::numeric_limits<double>::infinity();
  for_each_tile_shape([&](int tile_rows, int tile_columns) {
    const std::vector<ProductTiling> tilings = update_tilings(layers, batch, tile_rows, tile_columns);
    const double cycles = phase_cycles(tilings, kUpdateBytesPerWeight, blocks);
    if (cycles < best_cycles) {
      best_cycles = cycles;
      best = tilings;
    }
  });
  return best;
}

kernels::PersistentPhase product_phase(kernels::PersistentPhaseKind kind, int layer, const ProductTiling& tiling) {
  kernels::PersistentPhase phase;
  phase.kind = kind;
  phase.layer = layer;
  phase.tiling = tiling;
  return phase;
}

}  // namespace

std::size_t persistent_activation_bytes(const MlpSpec& model, int batch) {
  std::size_t floats =
      static_cast<std::size_t>(model.input_width()) + 3 * static_cast<std::size_t>(model.output_width());
  for (std::size_t w = 1; w + 1 < model.widths.size(); ++w) floats += 2 * static_cast<std::size_t>(model.widths[w]);
  return floats * static_cast<std::size_t>(batch) * sizeof(float);
}

std::string persistent_step_refusal(const MlpSpec& model, int batch) {
  const std::string name = "model " + model.widths_string();
  if (model.layer_count() < 2) return name + " has no hidden layer; the persistent step needs one";
  if (model.layer_count() > kernels::kPersistentMaxLayers) {
    return name + " has " + std::to_string(model.layer_count()) + " layers; the persistent step runs at most " +
           std::to_string(kernels::kPersistentMaxLayers);
  }
  if (model.output_width() > kernels::kPersistentMaxOutputs) {
    return name + " has " + std::to_string(model.output_width()) + " outputs; the persistent step runs at most " +
           std::to_string(kernels::kPersistentMaxOutputs);
  }
  if (batch < 1 || batch > kPersistentMaxBatch) {
    return "local batch " + std::to_string(batch) + ": the persistent step runs 1 to " +
           std::to_string(kPersistentMaxBatch);
  }
  const std::size_t bytes = persistent_activation_bytes(model, batch);
  if (bytes > kPersistentMaxActivationBytes) {
    return name + " at local batch " + std::to_string(batch) + ": its activations take " + std::to_string(bytes) +
           " bytes, more than the " + std::to_string(kPersistentMaxActivationBytes) +
           " the persistent step keeps on chip";
  }
  return "";
}

PersistentPlan plan_persistent_step(const MlpSpec& model, int batch, int blocks) {
  const std::string refusal = persistent_step_refusal(model, batch);
  MGPU_REQUIRE(refusal.empty(), refusal);
  MGPU_REQUIRE(blocks >= 1, "the persistent step needs at least one block");
  using Kind = kernels::PersistentPhaseKind;
  const std::vector<DenseLayer> layers = model.layers();
  const int last = static_cast<int>(layers.size()) - 1;  // the output layer
  PersistentPlan plan;
  for (int l = 0; l < last; ++l) {
    const DenseLayer& layer = layers[l];
    plan.phases.push_back(product_phase(Kind::forward, l, plan_product(batch, layer.fan_out, layer.fan_in, blocks)));
  }
  plan.phases.push_back(product_phase(Kind::head, last, ProductTiling{}));
  plan.forward_end = static_cast<int>(plan.phases.size());
  for (int l = last - 1; l >= 1; --l) {
    const DenseLayer& layer = layers[l];
    plan.phases.push_back(
        product_phase(Kind::input_gradient, l, plan_product(batch, layer.fan_in, layer.fan_out, blocks)));
  }
  plan.backward_end = static_cast<int>(plan.phases.size());
  plan.phases.push_back(product_phase(Kind::update, 0, ProductTiling{}));
  plan.update_tilings = plan_update(layers, batch, blocks);
  for (const kernels::PersistentPhase& phase : plan.phases) {
    if (phase.kind == Kind::forward || phase.kind == Kind::input_gradient)
      plan.shared_floats = std::max(plan.shared_floats, kernels::product_shared_floats(phase.tiling));
  }
  for (const ProductTiling& t : plan.update_tilings)
    plan.shared_floats = std::max(plan.shared_floats, kernels::product_shared_floats(t));
  return plan;
}

}  // namespace mgpu
