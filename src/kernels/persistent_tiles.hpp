// Purpose: the geometry of the persistent step's phases (persistent_step.cuh) as pure host/device functions: which
// outputs a block's tile holds, which of them and which K values each thread sums, where a staged operand lands in
// shared memory, and the phase list. The kernel computes every index through these functions, and the CPU tests
// replay them (tests/train/test_persistent_plan.cpp), so the planner, the kernel and the tests share one geometry.
#pragma once

#include <cstddef>

#include "platform/host_device.hpp"

namespace mgpu::kernels {

// Threads per block of the persistent kernel (one block per SM).
inline constexpr int kPersistentThreads = 512;
// Each thread sums a 4 x 4 block of its tile's outputs (strided over the tile, see ThreadRole).
inline constexpr int kMicroTile = 4;
// The largest model and head the kernel's tables and registers hold.
inline constexpr int kPersistentMaxLayers = 16;
inline constexpr int kPersistentMaxOutputs = 16;
inline constexpr int kPersistentMaxPhases = 2 * kPersistentMaxLayers - 1;

// One product of a phase: out[r, c] = sum over k < depth of rows_operand(r, k) * columns_operand(c, k), r < rows,
// c < columns, computed in tiles of tile_rows x tile_columns outputs, one tile per block at a time. tile_rows and
// tile_columns are powers of two from 4 to 128 with (tile_rows / 4) (tile_columns / 4) <= kPersistentThreads: the
// threads of a block form `parts` groups of (tile_rows / 4) (tile_columns / 4), each group covering the whole tile and
// summing every parts-th K value of each staged chunk of `chunk` K values.
struct ProductTiling {
  int rows = 0;
  int columns = 0;
  int depth = 0;
  int tile_rows = kMicroTile;
  int tile_columns = kMicroTile;
  int chunk = 1;
};

MGPU_HOST_DEVICE int ceil_divide(int a, int b) { return (a + b - 1) / b; }
MGPU_HOST_DEVICE int row_tiles(const ProductTiling& t) { return ceil_divide(t.rows, t.tile_rows); }
MGPU_HOST_DEVICE int column_tiles(const ProductTiling& t) { return ceil_divide(t.columns, t.tile_columns); }
MGPU_HOST_DEVICE int tile_count(const ProductTiling& t) { return row_tiles(t) * column_tiles(t); }
MGPU_HOST_DEVICE int threads_per_part(const ProductTiling& t) {
  return (t.tile_rows / kMicroTile) * (t.tile_columns / kMicroTile);
}
MGPU_HOST_DEVICE int part_count(const ProductTiling& t) { return kPersistentThreads / threads_per_part(t); }
MGPU_HOST_DEVICE int tile_outputs(const ProductTiling& t) { return t.tile_rows * t.tile_columns; }

// The first output of tile `tile` (tiles in row-major order over the tile grid).
struct TileOrigin {
  int row;
  int column;
};
MGPU_HOST_DEVICE TileOrigin tile_origin(const ProductTiling& t, int tile) {
  return {tile / column_tiles(t) * t.tile_rows, tile % column_tiles(t) * t.tile_columns};
}

// A thread's share of a tile: outputs (row + i row_step, column + j column_step) for i, j < kMicroTile (tile-local),
// and the K values part, part + parts, ... of each chunk. Strided rather than contiguous so that the lanes of a warp
// read consecutive shared-memory words (or one broadcast word) at each K value.
struct ThreadRole {
  int row;
  int column;
  int row_step;
  int column_step;
  int part;
  int parts;
};
MGPU_HOST_DEVICE ThreadRole thread_role(const ProductTiling& t, int thread) {
  const int group = threads_per_part(t);
  const int micro = thread % group;
  const int column_groups = t.tile_columns / kMicroTile;
  return {micro / column_groups, micro % column_groups, t.tile_rows / kMicroTile,
          column_groups,         thread / group,        kPersistentThreads / group};
}
// The tile-local output of (role, i, j), as row * tile_columns + column: its slot among the tile's outputs.
MGPU_HOST_DEVICE int role_output(const ProductTiling& t, const ThreadRole& role, int i, int j) {
  return (role.row + i * role.row_step) * t.tile_columns + role.column + j * role.column_step;
}

// A staged operand in shared memory: K-major, staged[k * staged_stride(tile) + index]; the odd stride keeps both the
// transposing stores (consecutive lanes, consecutive k) and the product's loads (consecutive lanes, consecutive
// index) free of bank conflicts.
MGPU_HOST_DEVICE int staged_stride(int tile) { return tile + 1; }
// Shared floats of one chunk of both operands, and of the parts' sums (parts x tile outputs: always
// kMicroTile^2 kPersistentThreads), which reuse the same memory once the chunk loop is done.
MGPU_HOST_DEVICE int staging_floats(const ProductTiling& t) {
  return t.chunk * (staged_stride(t.tile_rows) + staged_stride(t.tile_columns));
}
inline constexpr int kPartSumFloats = kMicroTile * kMicroTile * kPersistentThreads;
MGPU_HOST_DEVICE int product_shared_floats(const ProductTiling& t) {
  return staging_floats(t) > kPartSumFloats ? staging_floats(t) : kPartSumFloats;
}

// One operand of a product: its element (index, k) at base[index * leading + k] when k_contiguous, else at
// base[k * leading + index].
struct Operand {
  const float* base;
  int leading;
  bool k_contiguous;
};
struct ProductOperands {
  Operand rows;
  Operand columns;
};
// The three products of the step, for a layer of fan_in x fan_out with W [fan_out, fan_in] and row-major activations:
//   forward         Z[b, o] = sum_i x[b, i] W[o, i]          rows b, columns o, K = fan_in
//   input gradient  G[b, i] = sum_o dZ[b, o] W[o, i]         rows b, columns i, K = fan_out
//   weight gradient dW[o, i] = sum_b dZ[b, o] x[b, i]        rows o, columns i, K = batch
MGPU_HOST_DEVICE ProductOperands forward_operands(const float* input, const float* weights, int fan_in) {
  return {{input, fan_in, true}, {weights, fan_in, true}};
}
MGPU_HOST_DEVICE ProductOperands input_gradient_operands(const float* output_gradient, const float* weights, int fan_in,
                                                         int fan_out) {
  return {{output_gradient, fan_out, true}, {weights, fan_in, false}};
}
MGPU_HOST_DEVICE ProductOperands weight_gradient_operands(const float* output_gradient, const float* input, int fan_in,
                                                          int fan_out) {
  return {{output_gradient, fan_out, false}, {input, fan_in, false}};
}

// Element `e` of a staged chunk of `tile` indices (first, first + 1, ...) by `depth` K values (k0, k0 + 1, ...), in the
// order consecutive threads copy them: along K for an operand whose K values are contiguous in memory (coalesced
// reads, transposed into shared memory), along the index otherwise. `loads`: the element is inside the operand
// (index below `extent`), read at base[source]; else the staged value is zero. It lands at staged[destination].
struct StagedCopy {
  bool loads;
  std::size_t source;
  int destination;
};
MGPU_HOST_DEVICE StagedCopy staged_copy(const Operand& operand, int tile, int first, int extent, int k0, int depth,
                                        int e) {
  const int index = operand.k_contiguous ? e / depth : e % tile;
  const int k = operand.k_contiguous ? e % depth : e / tile;
  const bool loads = first + index < extent;
  const std::size_t source = !loads ? 0
                             : operand.k_contiguous
                                 ? static_cast<std::size_t>(first + index) * operand.leading + k0 + k
                                 : static_cast<std::size_t>(k0 + k) * operand.leading + first + index;
  return {loads, source, k * staged_stride(tile) + index};
}

// Tile output `o` (tile-local row * tile_columns + column) of the tile at `origin`, as a product position.
MGPU_HOST_DEVICE TileOrigin output_position(const ProductTiling& t, TileOrigin origin, int o) {
  return {origin.row + o / t.tile_columns, origin.column + o % t.tile_columns};
}

// What a phase of the step does (see persistent_step.cuh for the phase list).
enum class PersistentPhaseKind : int {
  forward,         // hidden layer `layer`: H = dropout(relu(input W^T + b))
  head,            // the output layer, the loss terms, dL/dy and the last hidden layer's dL/dZ, one warp per sample
  input_gradient,  // layer `layer` >= 1: dL/dZ of layer - 1 = (dL/dZ W) through layer - 1's ReLU and dropout
  update,          // every layer: weight and bias gradients and Adam, and the step's loss
  // The last hidden layer `layer`'s forward, the head and (layer >= 1) that layer's input gradient, one row tile of
  // samples at a time in one block: forward, head and input_gradient with no barrier between them, since each row
  // tile needs only its own samples. `tiling` is the forward's (one column tile: every unit of the layer), and
  // `gradient_tiling` the input gradient's, with the same tile rows.
  tail,
};
struct PersistentPhase {
  PersistentPhaseKind kind = PersistentPhaseKind::forward;
  int layer = 0;
  ProductTiling tiling;           // forward, input_gradient and tail; the update's are per layer
  ProductTiling gradient_tiling;  // tail only
};

// The update phase's tiles: layer 0's first, then layer 1's, ...; item -> (layer, tile of that layer).
struct LayerTile {
  int layer;
  int tile;
};
MGPU_HOST_DEVICE LayerTile locate_update_tile(const ProductTiling* tilings, int layers, int item) {
  for (int l = 0; l < layers; ++l) {
    const int tiles = tile_count(tilings[l]);
    if (item < tiles) return {l, item};
    item -= tiles;
  }
  return {layers, 0};  // past the last tile: the kernel never asks for it
}

}  // namespace mgpu::kernels
