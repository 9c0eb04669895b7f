// Purpose: what the fused weight-gradient + Adam kernels share (weight_gradient_adam.cu, one tile's whole batch per
// block; weight_gradient_adam_split.cu, the batch split over a cluster of blocks): the tiling of each W, the launch's
// layer table, and the batch sum of one tile over one chunk of samples staged in shared memory. Device code and the
// host's table builder; included by those .cu files only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/async_copy.cuh"
#include "kernels/weight_gradient_adam.cuh"

namespace mgpu::kernels::weight_gradient_tiles {

// A tile is 32 x 64 weights of one W: rows o0.. (fan_out) by columns i0.. (fan_in). For the batch sum, warp w of 8
// takes rows o0 + 4w .. + 3 and lane j columns i0 + j and i0 + 32 + j (each thread 4 x 2 sums, its X and dZ read from
// shared memory); for the update, each thread takes groups of 4 consecutive weights of a row, so that its global
// stores are 16 bytes wide where the rows are aligned.
constexpr int kThreads = 256;
constexpr int kRowsPerWarp = 4;
constexpr int kColumnsPerLane = 2;
constexpr int kTileRows = kRowsPerWarp * kThreads / 32;
constexpr int kTileColumns = 32 * kColumnsPerLane;
// Blocks per SM the registers allow (shared memory allows 3 with two stages and one batch chunk, 2 with more).
constexpr int kBlocksPerSm = 3;
// The batch is summed in chunks of this many samples, staged in shared memory by asynchronous copies (zero-filled
// past the batch).
constexpr int kBatchChunk = 32;
constexpr int kLayersPerLaunch = 32;

struct TileLayer {
  WeightGradientAdamLayer layer;
  int column_tiles;  // tiles across fan_in
  int first_tile;    // the layer's first tile in the launch
  // 16-byte copies and stores where rows are 16-byte aligned: of W and its state (fan_in and weight_offset multiples
  // of 4), of X (fan_in), of dZ (fan_out); else single floats.
  bool vector_state;
  bool vector_input;
  bool vector_gradient;
};
// Passed by value (kernel argument space, read through the constant cache): a block finds its layer without a
// dependent global load ahead of everything else.
struct LaunchTable {
  TileLayer layers[kLayersPerLaunch];
  int count;
  int tiles;
};

struct Chunk {
  float input[kBatchChunk][kTileColumns];  // X[b0 + b, i0 + j]
  float gradient[kBatchChunk][kTileRows];  // dZ[b0 + b, o0 + j]
};

struct TilePosition {
  int layer;  // index into the launch table
  int o0;
  int i0;
};

inline int tiles_of(int width, int tile) { return (width + tile - 1) / tile; }

__host__ __device__ inline int chunks_of(int batch) { return (batch + kBatchChunk - 1) / kBatchChunk; }

inline bool aligned(const float* rows, int width) {
  return width % 4 == 0 && reinterpret_cast<std::uintptr_t>(rows) % 16 == 0;
}

// The table of layers [0, count) (count <= kLayersPerLaunch), their tiles numbered in order. The flat buffers come
// from cudaMalloc (256-byte aligned): a row is 16-byte aligned when its offset is.
inline LaunchTable launch_table(const WeightGradientAdamLayer* layers, std::size_t count) {
  LaunchTable table{};
  table.count = static_cast<int>(std::min<std::size_t>(kLayersPerLaunch, count));
  int tiles = 0;
  for (int l = 0; l < table.count; ++l) {
    const WeightGradientAdamLayer& layer = layers[l];
    table.layers[l] = {layer,
                       tiles_of(layer.fan_in, kTileColumns),
                       tiles,
                       layer.fan_in % 4 == 0 && layer.weight_offset % 4 == 0,
                       aligned(layer.input, layer.fan_in),
                       aligned(layer.output_gradient, layer.fan_out)};
    tiles += tiles_of(layer.fan_in, kTileColumns) * tiles_of(layer.fan_out, kTileRows);
  }
  table.tiles = tiles;
  return table;
}

template <bool OneLayer>
__device__ __forceinline__ TilePosition locate(const LaunchTable& table, int tile) {
  int layer = 0;
  while (!OneLayer && layer + 1 < table.count && tile >= table.layers[layer + 1].first_tile) ++layer;
  const TileLayer& tiled = table.layers[layer];
  const int local = tile - tiled.first_tile;
  return {layer, (local / tiled.column_tiles) * kTileRows, (local % tiled.column_tiles) * kTileColumns};
}

// Starts the copies of the tile at rows row0.., columns col0.. of a row-major [rows, width] matrix into `tile`, zeros
// past the matrix's rows and width. Consecutive threads copy consecutive pieces of a row (coalesced): 16 bytes each
// when Vector (the rows 16-byte aligned), else single floats (any alignment).
template <bool Vector, int TileRows, int TileWidth>
__device__ __forceinline__ void copy_tile_pieces(float (&tile)[TileRows][TileWidth], const float* matrix, int rows,
                                                 int width, int row0, int col0) {
  constexpr int kPiece = Vector ? 4 : 1;
  constexpr int kPiecesPerRow = TileWidth / kPiece;
  static_assert(TileRows * kPiecesPerRow % kThreads == 0, "every thread copies the same number of pieces");
#pragma unroll
  for (int k = 0; k < TileRows * kPiecesPerRow / kThreads; ++k) {
    const int e = static_cast<int>(threadIdx.x) + k * kThreads;
    const int r = e / kPiecesPerRow;
    const int j = (e % kPiecesPerRow) * kPiece;
    const int valid = row0 + r < rows ? max(0, min(kPiece, width - col0 - j)) : 0;
    const float* from = valid > 0 ? matrix + static_cast<std::size_t>(row0 + r) * width + col0 + j : matrix;
    if constexpr (Vector) {
      copy_async(&tile[r][j], from, valid);
    } else {
      copy_async(&tile[r][j], from, valid > 0);
    }
  }
}
// copy_tile_pieces, 16-byte pieces where `vector` (always where Aligned: a kernel for aligned layers only).
template <bool Aligned, int TileRows, int TileWidth>
__device__ __forceinline__ void copy_tile(float (&tile)[TileRows][TileWidth], const float* matrix, int rows, int width,
                                          int row0, int col0, bool vector) {
  if (Aligned || vector) {
    copy_tile_pieces<true>(tile, matrix, rows, width, row0, col0);
  } else {
    copy_tile_pieces<false>(tile, matrix, rows, width, row0, col0);
  }
}

// Starts the copies of one chunk, X[b0.., i0..] and dZ[b0.., o0..], into `chunk` and commits them (with whatever this
// thread started before since its last commit) as one group.
template <bool Aligned>
__device__ __forceinline__ void copy_chunk(const TileLayer& tiled, int b0, int batch, int o0, int i0, Chunk& chunk) {
  const WeightGradientAdamLayer& layer = tiled.layer;
  copy_tile<Aligned>(chunk.input, layer.input, batch, layer.fan_in, b0, i0, tiled.vector_input);
  copy_tile<Aligned>(chunk.gradient, layer.output_gradient, batch, layer.fan_out, b0, o0, tiled.vector_gradient);
  commit_copies();
}

// sum[r][c] += dZ[b, row r] * X[b, column c] over the chunk's samples, in sample order; the bias thread adds the
// chunk's dZ of its row (zeros past the batch).
__device__ __forceinline__ void accumulate_chunk(const Chunk& chunk, int lane, int first_row, bool bias_thread,
                                                 float (&sum)[kRowsPerWarp][kColumnsPerLane], float& bias_sum) {
  if (bias_thread) {
    for (int b = 0; b < kBatchChunk; ++b) bias_sum += chunk.gradient[b][threadIdx.x];
  }
#pragma unroll 8
  for (int b = 0; b < kBatchChunk; ++b) {
    const float x0 = chunk.input[b][lane];
    const float x1 = chunk.input[b][lane + 32];
    // Every lane of the warp reads the same 4 values: one broadcast 16-byte load.
    const float4 d4 = *reinterpret_cast<const float4*>(&chunk.gradient[b][first_row]);
    const float d[kRowsPerWarp] = {d4.x, d4.y, d4.z, d4.w};
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      sum[r][0] = fmaf(d[r], x0, sum[r][0]);
      sum[r][1] = fmaf(d[r], x1, sum[r][1]);
    }
  }
}

}  // namespace mgpu::kernels::weight_gradient_tiles
