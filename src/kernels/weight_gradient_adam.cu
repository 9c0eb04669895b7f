// Purpose: the fused weight-gradient + Adam kernel (weight_gradient_adam.cuh): one launch updates every layer, each
// tile's whole batch summed by one block.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/adam_element.cuh"
#include "kernels/async_copy.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/weight_gradient_adam.cuh"
#include "kernels/weight_gradient_tiles.cuh"
#include "platform/cuda_check.hpp"
#include "platform/per_device_once.hpp"

namespace mgpu::kernels {
namespace {

using namespace weight_gradient_tiles;  // the tiling shared with weight_gradient_adam_split.cu, in this .cu file only

// One tile's optimizer state and its first chunk of the batch.
struct Stage {
  float state[3][kTileRows][kTileColumns];  // p, m, v of W[o0 + r, i0 + c]
  Chunk chunk;
};
// Dynamic shared memory: one stage, or two for a block that walks several tiles, then for batches of more than one
// chunk a second chunk buffer.
std::size_t shared_bytes_for(int stages, bool one_chunk) {
  return stages * sizeof(Stage) + (one_chunk ? 0 : sizeof(Chunk));
}
constexpr std::size_t kMostSharedBytes = 2 * sizeof(Stage) + sizeof(Chunk);

// Starts the copies of one tile's optimizer state into `stage` (not committed).
template <bool Aligned>
__device__ __forceinline__ void copy_state(const TileLayer& tiled, const TilePosition& at, Stage& stage,
                                           const float* parameters, const float* first_moment,
                                           const float* second_moment) {
  const float* arrays[3] = {parameters, first_moment, second_moment};
  const WeightGradientAdamLayer& layer = tiled.layer;
#pragma unroll
  for (int a = 0; a < 3; ++a) {
    copy_tile<Aligned>(stage.state[a], arrays[a] + layer.weight_offset, layer.fan_out, layer.fan_in, at.o0, at.i0,
                       tiled.vector_state);
  }
}

// Each block walks tiles blockIdx.x, + gridDim.x, ... With several tiles per block (a resident grid) the next tile's
// optimizer state and first chunk are copied into the other stage while this one is summed and updated: this kernel
// is bound by the 24 bytes per weight of that state, and a block that only requested its state when it started left
// the memory idle while it computed. With it, large's layer 0 alone reads and writes its optimizer state at 3.2 TB/s
// on H200, near the flat Adam's rate for its 28 bytes per weight.
//
// OneAlignedLayer: the launch holds one layer, whose rows are 16-byte aligned (the vector_* flags all set), so only
// the 16-byte paths are compiled and the layer's entry is fixed; OneChunk: the batch fits one chunk. Both cut the
// code, not only the branches. The general kernel is long, and Nsight Compute's per-instruction samples found many of
// the warps' stalls in the update waiting for instructions to be fetched, and few of the warp instructions were the
// batch sum's FMAs. The one-layer instance cuts large's layer-0 launch by 11% on H200 (eager step); large's early
// updates are single layers too, so they take it.
template <bool OneAlignedLayer, bool OneChunk>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    weight_gradient_adam_kernel(LaunchTable table, int batch, float* parameters, const float* gradients,
                                float* first_moment, float* second_moment, AdamConstants adam, const StepParams* params,
                                bool accumulated) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  Stage* const stages = reinterpret_cast<Stage*>(shared_bytes);
  const bool walks = static_cast<int>(gridDim.x) < table.tiles;  // several tiles per block: two stages
  Chunk& extra = *reinterpret_cast<Chunk*>(stages + (walks ? 2 : 1));
  // Stage k of an iteration (selected, not indexed: an indexed array of pointers would live in local memory).
  const auto stage_of = [&](int k) -> Stage& { return k == 0 ? stages[0] : stages[1]; };

  // The layer of a tile, from the table in the kernel's parameters: with one layer a fixed entry, read as uniform
  // constants; otherwise an indexed one, a constant-cache load that Nsight Compute saw warps wait for.
  const auto tiled_layer = [&](const TilePosition& position) -> const TileLayer& {
    return table.layers[OneAlignedLayer ? 0 : position.layer];
  };
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int first_row = (static_cast<int>(threadIdx.x) / 32) * kRowsPerWarp;  // within the tile
  const int stride = static_cast<int>(gridDim.x);
  int tile = static_cast<int>(blockIdx.x);
  TilePosition at = locate<OneAlignedLayer>(table, tile);

  // Launched dependent (dependent_launch.cuh): the optimizer state is written only by this kernel, so the first
  // tile's goes out while the kernel ahead (the last layer's backward) finishes; X and dZ are that backward's output.
  copy_state<OneAlignedLayer>(tiled_layer(at), at, stage_of(0), parameters, first_moment, second_moment);
  wait_for_previous_kernel();
  allow_next_kernel_to_start();
  copy_chunk<OneAlignedLayer>(tiled_layer(at), 0, batch, at.o0, at.i0, stage_of(0).chunk);

  const AdamStep step = adam_step(adam, params->correction1, params->correction2);
  for (int k = 0; tile < table.tiles; tile += stride, k ^= 1) {
    const WeightGradientAdamLayer& layer = tiled_layer(at).layer;
    const int next = tile + stride;
    const bool has_next = next < table.tiles;
    const TilePosition next_at = has_next ? locate<OneAlignedLayer>(table, next) : at;
    // Copies the next tile's state and first chunk into the other stage, whose last reader was the iteration before
    // (it ended with a barrier). With one chunk per tile that is before the batch sum; with more, after it, so the
    // chunk copies below are not queued behind it.
    const auto prefetch_next = [&] {
      copy_state<OneAlignedLayer>(tiled_layer(next_at), next_at, stage_of(k ^ 1), parameters, first_moment,
                                  second_moment);
      copy_chunk<OneAlignedLayer>(tiled_layer(next_at), 0, batch, next_at.o0, next_at.i0, stage_of(k ^ 1).chunk);
    };
    if (OneChunk && has_next) prefetch_next();

    float sum[kRowsPerWarp][kColumnsPerLane] = {};
    // The first column tile of each row block also updates those rows' biases, whose gradient is the batch sum of
    // dZ: thread t < 32 sums row o0 + t from the same staged chunks, in sample order.
    const bool bias_thread = layer.has_bias && at.i0 == 0 && static_cast<int>(threadIdx.x) < kTileRows;
    float bias_sum = 0.0f;
    // Chunks alternate between this stage's chunk buffer and the extra one: the next is in flight while this one is
    // summed. Copy groups complete in order, so waiting for all but the newest group means this chunk has landed.
    Chunk& own_chunk = stage_of(k).chunk;
    for (int b0 = 0, current = 0; OneChunk ? b0 == 0 : b0 < batch; b0 += kBatchChunk, current ^= 1) {
      const bool more = !OneChunk && b0 + kBatchChunk < batch;
      if (more)
        copy_chunk<OneAlignedLayer>(tiled_layer(at), b0 + kBatchChunk, batch, at.o0, at.i0,
                                    current == 0 ? extra : own_chunk);
      if (more || (OneChunk && has_next)) {
        wait_copies<1>();
      } else {
        wait_copies<0>();
      }
      __syncthreads();  // every thread's copies of this chunk are visible
      accumulate_chunk(OneChunk || current == 0 ? own_chunk : extra, lane, first_row, bias_thread, sum, bias_sum);
      __syncthreads();  // this buffer is free for the chunk after next
    }
    if (!OneChunk && has_next) prefetch_next();

    // The sums go through shared memory (this stage's chunk input tile, free after the barrier that ended the batch
    // loop) so that the update can use another mapping: 4 consecutive weights per thread, one 16-byte load or store
    // per array, a quarter of the memory instructions of the summing mapping (this kernel is bound by them).
    float(&sums)[kBatchChunk][kTileColumns] = own_chunk.input;
    static_assert(kBatchChunk == kTileRows, "a chunk's input tile holds a tile of sums");
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
#pragma unroll
      for (int c = 0; c < kColumnsPerLane; ++c) sums[first_row + r][lane + 32 * c] = sum[r][c];
    }
    __syncthreads();
    const Stage& stage = stage_of(k);
    // update(row, column, count): Adam on weights (o0 + row, i0 + column ..+ count - 1), all inside the layer.
    const auto update = [&](int row, int column, auto count) {
      constexpr int kCount = decltype(count)::value;
      const std::size_t index =
          layer.weight_offset + static_cast<std::size_t>(at.o0 + row) * layer.fan_in + at.i0 + column;
      float p[kCount], m[kCount], v[kCount], g[kCount];
#pragma unroll
      for (int e = 0; e < kCount; ++e) {
        p[e] = stage.state[0][row][column + e];
        m[e] = stage.state[1][row][column + e];
        v[e] = stage.state[2][row][column + e];
        g[e] = sums[row][column + e];
      }
      if (accumulated) {
#pragma unroll
        for (int e = 0; e < kCount; ++e) g[e] = gradients[index + e] + g[e];
      }
#pragma unroll
      for (int e = 0; e < kCount; ++e) adam_element(p[e], m[e], v[e], g[e] * adam.gradient_scale, step);
      if constexpr (kCount == 4) {
        *reinterpret_cast<float4*>(parameters + index) = make_float4(p[0], p[1], p[2], p[3]);
        *reinterpret_cast<float4*>(first_moment + index) = make_float4(m[0], m[1], m[2], m[3]);
        *reinterpret_cast<float4*>(second_moment + index) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
        parameters[index] = p[0];
        first_moment[index] = m[0];
        second_moment[index] = v[0];
      }
    };
    if (OneAlignedLayer || tiled_layer(at).vector_state) {
      // Aligned rows: a group of 4 lies wholly inside the layer or wholly outside.
      constexpr int kGroupsPerRow = kTileColumns / 4;
#pragma unroll
      for (int q = 0; q < kTileRows * kGroupsPerRow / kThreads; ++q) {
        const int e = static_cast<int>(threadIdx.x) + q * kThreads;
        const int row = e / kGroupsPerRow;
        const int column = (e % kGroupsPerRow) * 4;
        if (at.o0 + row < layer.fan_out && at.i0 + column < layer.fan_in)
          update(row, column, std::integral_constant<int, 4>{});
      }
    } else {
#pragma unroll
      for (int q = 0; q < kTileRows * kTileColumns / kThreads; ++q) {
        const int e = static_cast<int>(threadIdx.x) + q * kThreads;
        const int row = e / kTileColumns;
        const int column = e % kTileColumns;
        if (at.o0 + row < layer.fan_out && at.i0 + column < layer.fan_in)
          update(row, column, std::integral_constant<int, 1>{});
      }
    }

    const int bias_row = at.o0 + static_cast<int>(threadIdx.x);
    if (bias_thread && bias_row < layer.fan_out) {
      const std::size_t index = layer.bias_offset + bias_row;
      float bias = parameters[index];
      float bias_m = first_moment[index];
      float bias_v = second_moment[index];
      const float gradient = accumulated ? gradients[index] + bias_sum : bias_sum;
      adam_element(bias, bias_m, bias_v, gradient * adam.gradient_scale, step);
      parameters[index] = bias;
      first_moment[index] = bias_m;
      second_moment[index] = bias_v;
    }
    __syncthreads();  // this stage's state is read: the prefetch two tiles on may overwrite it
    at = next_at;
  }
}

using KernelPointer = void (*)(LaunchTable, int, float*, const float*, float*, float*, AdamConstants, const StepParams*,
                               bool);

// The instance, with its opt-in to more than the default 48 KiB of dynamic shared memory (per kernel and device).
template <bool OneAlignedLayer, bool OneChunk>
KernelPointer opted_in_kernel() {
  static std::atomic<std::uint64_t> opted_in{0};
  MGPU_CUDA_CHECK(once_per_device(opted_in, [] {
    return cudaFuncSetAttribute(weight_gradient_adam_kernel<OneAlignedLayer, OneChunk>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kMostSharedBytes));
  }));
  return weight_gradient_adam_kernel<OneAlignedLayer, OneChunk>;
}

KernelPointer kernel_for(bool one_aligned_layer, bool one_chunk) {
  if (one_aligned_layer) return one_chunk ? opted_in_kernel<true, true>() : opted_in_kernel<true, false>();
  return one_chunk ? opted_in_kernel<false, true>() : opted_in_kernel<false, false>();
}

}  // namespace

void weight_gradient_adam(const WeightGradientAdamLayer* layers, std::size_t layer_count, int batch, float* parameters,
                          const float* gradients, float* first_moment, float* second_moment, const AdamConstants& adam,
                          const StepParams* params, bool accumulated, WeightGradientAdamGrid grid,
                          cudaStream_t stream) {
  for (std::size_t first = 0; first < layer_count; first += kLayersPerLaunch) {
    const LaunchTable table = launch_table(layers + first, layer_count - first);
    const int tiles = table.tiles;
    if (tiles == 0) continue;
    const bool one_chunk = batch <= kBatchChunk;
    const TileLayer& only = table.layers[0];
    const bool one_aligned_layer = table.count == 1 && only.vector_state && only.vector_input && only.vector_gradient;
    const KernelPointer kernel = kernel_for(one_aligned_layer, one_chunk);
    int blocks = tiles;
    std::size_t shared_bytes = shared_bytes_for(1, one_chunk);
    if (grid == WeightGradientAdamGrid::resident) {
      int device = 0;
      int sms = 0;
      int per_sm = 0;
      MGPU_CUDA_CHECK(cudaGetDevice(&device));
      MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      MGPU_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shared_bytes_for(2, one_chunk)));
      // A block in every resident slot, the tiles dealt out in turn: no SM then carries more than one tile per block
      // more than another. (The fewest blocks that carry the same number of tiles each would give large's 2400
      // layer-0 tiles 343 blocks of 7 on 396 slots: 3 blocks on some SMs, 2 on others, so the SMs with 3 set the
      // time; on 1 x H200 this grid took large batch 32's optimizer phase from 0.051 to 0.046 ms.)
      const int resident = std::max(1, per_sm) * sms;
      blocks = std::min(tiles, resident);
      if (blocks < tiles) shared_bytes = shared_bytes_for(2, one_chunk);
    }
    MGPU_CUDA_CHECK(launch_dependent(kernel, blocks, kThreads, shared_bytes, stream, table, batch, parameters,
                                     gradients, first_moment, second_moment, adam, params, accumulated));
  }
}

}  // namespace mgpu::kernels
