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
// A grid-wide barrier between two phases: every block's arrival at one counter in L2 and its polling, about a
// microsecond.
constexpr double kGridBarrierCycles = 2000;
// The tail's row tiles: the samples of one 4 x 4 share, one warp of the block each for the head.
constexpr int kTailRows = kernels::kMicroTile;

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

kernels::PersistentPhase product_phase(kernels::PersistentPhaseKind kind, int layer, const ProductTiling& tiling,
                                       const ProductTiling& gradient_tiling = {}) {
  kernels::PersistentPhase phase;
  phase.kind = kind;
  phase.layer = layer;
  phase.tiling = tiling;
  phase.gradient_tiling = gradient_tiling;
  return phase;
}

// The last hidden layer's forward and input gradient as the tail runs them: row tiles of kTailRows samples, the
// forward one column tile wide (every unit of the layer, where it has at most the widest tile's) so that the head can
// follow in the same block.
struct TailTilings {
  ProductTiling forward;
  ProductTiling gradient;
};
TailTilings tail_tilings(const DenseLayer& hidden, int batch) {
  return {tiling_of(batch, hidden.fan_out, hidden.fan_in, kTailRows, covering_edge(hidden.fan_out)),
          tiling_of(batch, hidden.fan_in, hidden.fan_out, kTailRows, covering_edge(hidden.fan_in))};
}

// The tail's cycles: each row tile (one block) runs its forward tile, the head and every column tile of the input
// gradient (none for layer 0), the row tiles dealt to the blocks in turn.
double tail_cycles(const TailTilings& tail, bool with_gradient, int blocks) {
  const TileCost forward = tile_cost(tail.forward, 0.0);
  const TileCost gradient = tile_cost(tail.gradient, 0.0);
  const int columns = with_gradient ? kernels::column_tiles(tail.gradient) : 0;
  const int row_tiles = kernels::row_tiles(tail.forward);
  const double per_row_tile = forward.cycles + columns * gradient.cycles + 2 * kBarrierCycles;
  const double bytes = forward.bytes + columns * gradient.bytes;
  return std::max(kernels::ceil_divide(row_tiles, blocks) * per_row_tile, row_tiles * bytes / kL2BytesPerCycle);
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
  const int hidden = last - 1;                           // the last hidden layer
  const bool with_gradient = hidden >= 1;
  std::vector<kernels::PersistentPhase> before, after;  // the phases before the last hidden layer's, and after
  for (int l = 0; l < hidden; ++l)
    before.push_back(product_phase(Kind::forward, l, plan_product(batch, layers[l].fan_out, layers[l].fan_in, blocks)));
  for (int l = hidden - 1; l >= 1; --l) {
    after.push_back(
        product_phase(Kind::input_gradient, l, plan_product(batch, layers[l].fan_in, layers[l].fan_out, blocks)));
  }
  // The last hidden layer's forward, the head and that layer's input gradient: three phases, or one tail where the
  // barriers it saves outweigh doing each row tile's work in one block.
  const DenseLayer& last_hidden = layers[hidden];
  ProductTiling forward = plan_product(batch, last_hidden.fan_out, last_hidden.fan_in, blocks);
  ProductTiling gradient = plan_product(batch, last_hidden.fan_in, last_hidden.fan_out, blocks);
  const double separate = phase_cycles({forward}, 0.0, blocks) + kGridBarrierCycles +
                          (with_gradient ? phase_cycles({gradient}, 0.0, blocks) + kGridBarrierCycles : 0.0);
  const TailTilings tail = tail_tilings(last_hidden, batch);
  const bool fused = kernels::column_tiles(tail.forward) == 1 && tail_cycles(tail, with_gradient, blocks) < separate;
  if (fused) {
    forward = tail.forward;
    gradient = tail.gradient;
  }
  PersistentPlan plan;
  plan.marked_phases = before;
  plan.marked_phases.push_back(product_phase(Kind::forward, hidden, forward));
  plan.marked_phases.push_back(product_phase(Kind::head, last, ProductTiling{}));
  plan.forward_end = static_cast<int>(plan.marked_phases.size());
  if (with_gradient) plan.marked_phases.push_back(product_phase(Kind::input_gradient, hidden, gradient));
  plan.marked_phases.insert(plan.marked_phases.end(), after.begin(), after.end());
  plan.backward_end = static_cast<int>(plan.marked_phases.size());
  const kernels::PersistentPhase update = product_phase(Kind::update, 0, ProductTiling{});
  plan.marked_phases.push_back(update);
  plan.phases = plan.marked_phases;
  if (fused) {
    plan.phases = before;
    plan.phases.push_back(product_phase(Kind::tail, hidden, forward, gradient));
    plan.phases.insert(plan.phases.end(), after.begin(), after.end());
    plan.phases.push_back(update);
  }
  plan.update_tilings = plan_update(layers, batch, blocks);
  for (const kernels::PersistentPhase& phase : plan.marked_phases) {
    if (phase.kind == Kind::forward || phase.kind == Kind::input_gradient)
      plan.shared_floats = std::max(plan.shared_floats, kernels::product_shared_floats(phase.tiling));
  }
  for (const ProductTiling& t : plan.update_tilings)
    plan.shared_floats = std::max(plan.shared_floats, kernels::product_shared_floats(t));
  return plan;
}

}  // namespace mgpu
