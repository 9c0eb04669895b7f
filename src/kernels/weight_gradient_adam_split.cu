// Purpose: the fused weight-gradient + Adam kernel with each tile's batch split over a thread-block cluster
// (weight_gradient_adam_split.cuh): the blocks' partial sums added through distributed shared memory, in block order.
#include <cooperative_groups.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/adam_element.cuh"
#include "kernels/async_copy.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/weight_gradient_adam_split.cuh"
#include "kernels/weight_gradient_tiles.cuh"
#include "platform/cuda_check.hpp"
#include "platform/error.hpp"

namespace cg = cooperative_groups;

namespace mgpu::kernels {
namespace {

using namespace weight_gradient_tiles;  // the tiling shared with weight_gradient_adam.cu, in this .cu file only

// Why a cluster: the parts of a tile must be added before Adam, in a fixed order. Through global memory that is a
// store of every partial tile, a counter and a reload by the block that counts last, which then still has to read
// the tile's optimizer state; in a cluster the partial tiles stay in shared memory, every block reads the others'
// directly after one barrier, and each block updates its own 1/splits of the tile, whose state it loaded into
// registers before its batch sum began: no workspace and no counters.
constexpr int kSplitCounts[] = {2, 4, 8};  // up to the portable cluster size
constexpr int kGroupsPerRow = kTileColumns / 4;

// Two chunk buffers (the next chunk in flight while one is summed); after the batch loop the first one's input tile
// holds the block's partial sums, which the cluster's blocks read, and `bias` its partial bias sums.
struct SplitShared {
  Chunk chunks[2];
  float bias[kTileRows];
};

// Up to 4 consecutive floats at `from` (count of them valid) into `to`, zeros after: one 16-byte load when `vector`
// (then count is 0 or 4).
__device__ __forceinline__ void load4(float (&to)[4], const float* from, int count, bool vector) {
  if (vector && count == 4) {
    const float4 x = *reinterpret_cast<const float4*>(from);
    to[0] = x.x, to[1] = x.y, to[2] = x.z, to[3] = x.w;
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) to[e] = e < count ? from[e] : 0.0f;
}
__device__ __forceinline__ void store4(float* to, const float (&from)[4], int count, bool vector) {
  if (vector && count == 4) {
    *reinterpret_cast<float4*>(to) = make_float4(from[0], from[1], from[2], from[3]);
    return;
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    if (e < count) to[e] = from[e];
  }
}

// The batch sum of chunks [first, end) of tile `at` into sum and (bias thread) bias_sum, in sample order: each chunk
// copied into one buffer while the one before is summed from the other.
__device__ __forceinline__ void sum_chunks(const TileLayer& tiled, const TilePosition& at, int batch, int first,
                                           int end, SplitShared& shared, bool bias_thread,
                                           float (&sum)[kRowsPerWarp][kColumnsPerLane], float& bias_sum) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int first_row = (static_cast<int>(threadIdx.x) / 32) * kRowsPerWarp;  // within the tile
  if (first < end) copy_chunk<false>(tiled, first * kBatchChunk, batch, at.o0, at.i0, shared.chunks[0]);
  for (int c = first, current = 0; c < end; ++c, current ^= 1) {
    const bool more = c + 1 < end;
    if (more) {
      copy_chunk<false>(tiled, (c + 1) * kBatchChunk, batch, at.o0, at.i0, shared.chunks[current ^ 1]);
      wait_copies<1>();  // copy groups complete in order: this chunk's has landed
    } else {
      wait_copies<0>();
    }
    __syncthreads();  // every thread's copies of this chunk are visible
    accumulate_chunk(shared.chunks[current], lane, first_row, bias_thread, sum, bias_sum);
    __syncthreads();  // this buffer is free for the chunk after next
  }
}

// One block per (tile, part), the Splits parts of a tile one cluster (part = the block's rank in it). Block `part`
// sums chunks [part x P, (part + 1) x P) of the batch (P = the chunks over Splits, rounded up; the last parts may
// have fewer or none), then updates the tile's rows part x R .. + R - 1 (R = 32 / Splits), 4 consecutive weights
// per thread, and those rows' biases where the tile holds the layer's first columns.
template <int Splits>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    weight_gradient_adam_split_kernel(LaunchTable table, int batch, float* parameters, const float* gradients,
                                      float* first_moment, float* second_moment, AdamConstants adam,
                                      const StepParams* params, bool accumulated) {
  constexpr int kRowsPerPart = kTileRows / Splits;
  static_assert(kRowsPerPart * kGroupsPerRow <= kThreads, "a thread per group of 4 weights of the block's rows");
  __shared__ __align__(16) SplitShared shared;
  cg::cluster_group cluster = cg::this_cluster();
  const int part = static_cast<int>(cluster.block_rank());
  const TilePosition at = locate<false>(table, static_cast<int>(blockIdx.x) / Splits);
  const TileLayer& tiled = table.layers[at.layer];
  const WeightGradientAdamLayer& layer = tiled.layer;

  // This thread's weights in the update: row o0 + row, columns column .. + 3 (those inside the layer: count).
  const int group = static_cast<int>(threadIdx.x);
  const int row = part * kRowsPerPart + group / kGroupsPerRow;  // within the tile
  const int column = (group % kGroupsPerRow) * 4;
  const bool in_layer = group < kRowsPerPart * kGroupsPerRow && at.o0 + row < layer.fan_out;
  const int count = in_layer ? max(0, min(4, layer.fan_in - (at.i0 + column))) : 0;
  const std::size_t index =
      count > 0 ? layer.weight_offset + static_cast<std::size_t>(at.o0 + row) * layer.fan_in + at.i0 + column : 0;
  // The biases of this block's rows: thread t < R takes row o0 + part x R + t.
  const int bias_row = at.o0 + part * kRowsPerPart + group;
  const bool bias_updater = layer.has_bias && at.i0 == 0 && group < kRowsPerPart && bias_row < layer.fan_out;
  const std::size_t bias_index = bias_updater ? layer.bias_offset + bias_row : 0;

  // Launched dependent (dependent_launch.cuh): the optimizer state is written only by this kernel, so this thread's
  // share is loaded while the kernel ahead (the last layer's backward) finishes; X and dZ are that backward's output.
  float p[4], m[4], v[4];
  load4(p, parameters + index, count, tiled.vector_state);
  load4(m, first_moment + index, count, tiled.vector_state);
  load4(v, second_moment + index, count, tiled.vector_state);
  wait_for_previous_kernel();
  allow_next_kernel_to_start();

  const int chunks = chunks_of(batch);
  const int per_part = (chunks + Splits - 1) / Splits;
  const int first = min(chunks, part * per_part);
  float sum[kRowsPerWarp][kColumnsPerLane] = {};
  float bias_sum = 0.0f;
  const bool bias_thread = layer.has_bias && at.i0 == 0 && group < kTileRows;
  sum_chunks(tiled, at, batch, first, min(chunks, first + per_part), shared, bias_thread, sum, bias_sum);

  // The block's partial sums into shared memory (the first chunk buffer's input tile, free after the loop's last
  // barrier), then one cluster barrier: every block's partial tile is complete and visible to the others.
  float(&sums)[kBatchChunk][kTileColumns] = shared.chunks[0].input;
  static_assert(kBatchChunk == kTileRows, "a chunk's input tile holds a tile of sums");
  const int lane = group % 32;
  const int first_row = (group / 32) * kRowsPerWarp;
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
#pragma unroll
    for (int c = 0; c < kColumnsPerLane; ++c) sums[first_row + r][lane + 32 * c] = sum[r][c];
  }
  if (bias_thread) shared.bias[group] = bias_sum;
  cluster.sync();

  // The biases' state is loaded here, not with the weights' (the registers held through the batch sum are short), and
  // while the sums below are read.
  float bias = 0.0f, bias_m = 0.0f, bias_v = 0.0f;
  if (bias_updater)
    bias = parameters[bias_index], bias_m = first_moment[bias_index], bias_v = second_moment[bias_index];
  // This block's rows summed over the parts in part order (the same bits on every call), then a second barrier: no
  // block leaves (and frees its shared memory) while another still reads it.
  float g[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float bias_gradient = 0.0f;
#pragma unroll
  for (int q = 0; q < Splits; ++q) {
    if (count > 0) {
      const float4 x = *reinterpret_cast<const float4*>(cluster.map_shared_rank(&sums[row][column], q));
      g[0] += x.x, g[1] += x.y, g[2] += x.z, g[3] += x.w;
    }
    if (bias_updater) bias_gradient += *cluster.map_shared_rank(&shared.bias[part * kRowsPerPart + group], q);
  }
  cluster.sync();

  const AdamStep step = adam_step(adam, params->correction1, params->correction2);
  if (count > 0) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float gradient = accumulated && e < count ? gradients[index + e] + g[e] : g[e];
      adam_element(p[e], m[e], v[e], gradient * adam.gradient_scale, step);
    }
    store4(parameters + index, p, count, tiled.vector_state);
    store4(first_moment + index, m, count, tiled.vector_state);
    store4(second_moment + index, v, count, tiled.vector_state);
  }
  if (bias_updater) {
    const float gradient = accumulated ? gradients[bias_index] + bias_gradient : bias_gradient;
    adam_element(bias, bias_m, bias_v, gradient * adam.gradient_scale, step);
    parameters[bias_index] = bias;
    first_moment[bias_index] = bias_m;
    second_moment[bias_index] = bias_v;
  }
}

using KernelPointer = void (*)(LaunchTable, int, float*, const float*, float*, float*, AdamConstants, const StepParams*,
                               bool);

KernelPointer kernel_for(int splits) {
  switch (splits) {
    case 2:
      return weight_gradient_adam_split_kernel<2>;
    case 4:
      return weight_gradient_adam_split_kernel<4>;
    case 8:
      return weight_gradient_adam_split_kernel<8>;
    default:
      return nullptr;
  }
}

int total_tiles(const WeightGradientAdamLayer* layers, std::size_t layer_count) {
  int tiles = 0;
  for (std::size_t first = 0; first < layer_count; first += kLayersPerLaunch)
    tiles += launch_table(layers + first, layer_count - first).tiles;
  return tiles;
}

}  // namespace

std::vector<int> weight_gradient_adam_split_counts(const WeightGradientAdamLayer* layers, std::size_t layer_count,
                                                   int batch) {
  std::vector<int> counts;
  int device = 0, major = 0, sms = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (major < 9 || total_tiles(layers, layer_count) >= kBlocksPerSm * sms) return counts;
  for (int splits : kSplitCounts) {
    if (splits <= chunks_of(batch)) counts.push_back(splits);
  }
  return counts;
}

void weight_gradient_adam_split(const WeightGradientAdamLayer* layers, std::size_t layer_count, int batch, int splits,
                                float* parameters, const float* gradients, float* first_moment, float* second_moment,
                                const AdamConstants& adam, const StepParams* params, bool accumulated,
                                cudaStream_t stream) {
  const KernelPointer kernel = kernel_for(splits);
  MGPU_REQUIRE(kernel != nullptr,
               "the split fused optimizer takes 2, 4 or 8 parts of the batch, not " + std::to_string(splits));
  for (std::size_t first = 0; first < layer_count; first += kLayersPerLaunch) {
    const LaunchTable table = launch_table(layers + first, layer_count - first);
    if (table.tiles == 0) continue;
    cudaLaunchAttribute attributes[2];
    attributes[0] = cudaLaunchAttribute{};
    attributes[0].id = cudaLaunchAttributeClusterDimension;
    attributes[0].val.clusterDim.x = static_cast<unsigned>(splits);
    attributes[0].val.clusterDim.y = 1;
    attributes[0].val.clusterDim.z = 1;
    attributes[1] = dependent_launch_attribute();
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(table.tiles * splits));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    config.attrs = attributes;
    config.numAttrs = dependent_launch_enabled() ? 2 : 1;
    MGPU_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, table, batch, parameters, gradients, first_moment,
                                       second_moment, adam, params, accumulated));
  }
}

}  // namespace mgpu::kernels
