// Purpose: the persistent step's kernel (persistent_step.cuh): every phase of a one-GPU step in one cooperative launch,
// a grid-wide barrier between phases, each product tiled over the blocks as persistent_tiles.hpp lays it out. The
// elementwise formulas are those of the step's other kernels (dropout's mask from synthetic_data.hpp, Adam's
// adam_element), so both paths train the same function.
#include <cooperative_groups.h>

#include <cstdint>

#include "kernels/adam_element.cuh"
#include "kernels/persistent_step.cuh"
#include "model/synthetic_data.hpp"
#include "platform/cuda_check.hpp"

namespace cg = cooperative_groups;

namespace mgpu::kernels {
namespace {

// Why one kernel: a small model's step is a chain of about ten dependent kernels, each a few microseconds of launch,
// ramp and tail (a graph node alone measured 0.54 us on H200) around well under a microsecond of work. Here the
// chain's links are phases of one launch, separated by grid barriers, every block resident throughout.
//
// Memory visibility: what one phase writes, another block reads only after a grid barrier (release and acquire at
// GPU scope), and it reads it with ld.global.cg (L2, never a stale L1 line), as everything written inside this
// launch. Parameters and Adam's moments are written only by the last phase, by the one thread that also reads each of
// them there, so the phases before it may read them through L1.

constexpr int kStagingUnroll = 8;  // loads each thread has in flight while staging an operand
constexpr int kWarps = kPersistentThreads / 32;

// Stages one chunk of an operand (persistent_tiles.hpp's staged_copy: tile indices from `first`, depth K values from
// k0, zero past `extent`). Each thread loads kStagingUnroll elements before it stores any.
__device__ void stage_operand(float* staged, int tile, const Operand& operand, int first, int extent, int k0,
                              int depth) {
  const int total = tile * depth;
  for (int base = static_cast<int>(threadIdx.x); base < total; base += kPersistentThreads * kStagingUnroll) {
    float values[kStagingUnroll];
    int destinations[kStagingUnroll];
#pragma unroll
    for (int u = 0; u < kStagingUnroll; ++u) {
      const int e = base + u * kPersistentThreads;
      values[u] = 0.0f;
      destinations[u] = -1;
      if (e >= total) continue;
      const StagedCopy copy = staged_copy(operand, tile, first, extent, k0, depth, e);
      destinations[u] = copy.destination;
      if (copy.loads) values[u] = __ldcg(operand.base + copy.source);
    }
#pragma unroll
    for (int u = 0; u < kStagingUnroll; ++u) {
      if (destinations[u] >= 0) staged[destinations[u]] = values[u];
    }
  }
}

// This thread's sums of one tile over all K: sums[i][j] of its role's outputs (persistent_tiles.hpp), and with
// `sum_rows` the rows operand's K sum of tile row threadIdx.x (threads below tile_rows; the bias gradient). Ends with a
// barrier: shared memory is free again.
__device__ void multiply_tile(float* shared, const ProductTiling& t, TileOrigin origin, const ProductOperands& operands,
                              bool sum_rows, float (&sums)[kMicroTile][kMicroTile], float& row_sum) {
  const ThreadRole role = thread_role(t, static_cast<int>(threadIdx.x));
  const int row_stride = staged_stride(t.tile_rows);
  const int column_stride = staged_stride(t.tile_columns);
  float* const staged_rows = shared;
  float* const staged_columns = shared + t.chunk * row_stride;
#pragma unroll
  for (int i = 0; i < kMicroTile; ++i) {
#pragma unroll
    for (int j = 0; j < kMicroTile; ++j) sums[i][j] = 0.0f;
  }
  row_sum = 0.0f;
  const bool sums_a_row = sum_rows && static_cast<int>(threadIdx.x) < t.tile_rows;
  for (int k0 = 0; k0 < t.depth; k0 += t.chunk) {
    const int depth = min(t.chunk, t.depth - k0);
    stage_operand(staged_rows, t.tile_rows, operands.rows, origin.row, t.rows, k0, depth);
    stage_operand(staged_columns, t.tile_columns, operands.columns, origin.column, t.columns, k0, depth);
    __syncthreads();
    for (int k = role.part; k < depth; k += role.parts) {
      const float* a = staged_rows + k * row_stride + role.row;
      const float* b = staged_columns + k * column_stride + role.column;
      float av[kMicroTile];
      float bv[kMicroTile];
#pragma unroll
      for (int i = 0; i < kMicroTile; ++i) av[i] = a[i * role.row_step];
#pragma unroll
      for (int j = 0; j < kMicroTile; ++j) bv[j] = b[j * role.column_step];
#pragma unroll
      for (int i = 0; i < kMicroTile; ++i) {
#pragma unroll
        for (int j = 0; j < kMicroTile; ++j) sums[i][j] = fmaf(av[i], bv[j], sums[i][j]);
      }
    }
    if (sums_a_row) {
      for (int k = 0; k < depth; ++k) row_sum += staged_rows[k * row_stride + threadIdx.x];
    }
    __syncthreads();  // the chunk is read: the next one (or the parts' sums) may overwrite it
  }
}

// Adds the parts' sums of every output of the tile by a fixed tree over the parts (part p += part p + half, halves
// from parts / 2 down to 1), leaving tile output o's sum in shared[o]. Ends with a barrier; the caller reads the sums
// and then passes a barrier before shared memory is used again.
__device__ void combine_parts(float* shared, const ProductTiling& t, const float (&sums)[kMicroTile][kMicroTile]) {
  const ThreadRole role = thread_role(t, static_cast<int>(threadIdx.x));
  const int outputs = tile_outputs(t);
  float* const part_sums = shared;  // [part][tile output]
#pragma unroll
  for (int i = 0; i < kMicroTile; ++i) {
#pragma unroll
    for (int j = 0; j < kMicroTile; ++j) part_sums[role.part * outputs + role_output(t, role, i, j)] = sums[i][j];
  }
  __syncthreads();
  for (int half = role.parts / 2; half > 0; half /= 2) {
    for (int e = static_cast<int>(threadIdx.x); e < half * outputs; e += kPersistentThreads)
      part_sums[e] += part_sums[e + half * outputs];
    __syncthreads();
  }
}

// Tile `tile` of product `t`, each of its outputs inside the product stored through store(row, column, value). Ends
// with a barrier: shared memory is free again.
template <typename Store>
__device__ void store_tile(float* shared, const ProductTiling& t, int tile, const ProductOperands& operands,
                           Store&& store) {
  const TileOrigin origin = tile_origin(t, tile);
  float sums[kMicroTile][kMicroTile];
  float unused = 0.0f;
  multiply_tile(shared, t, origin, operands, false, sums, unused);
  combine_parts(shared, t, sums);
  for (int o = static_cast<int>(threadIdx.x); o < tile_outputs(t); o += kPersistentThreads) {
    const TileOrigin at = output_position(t, origin, o);
    if (at.row < t.rows && at.column < t.columns) store(at.row, at.column, shared[o]);
  }
  __syncthreads();  // the sums are read: the next tile may stage
}

// Tile `tile` of hidden layer l's forward: H[b, o] = keep(b, o) ? max(sum_i x[b, i] W[o, i] + bias[o], 0) / (1 - p)
// : 0, the mask of bias_relu_dropout.
__device__ void forward_tile(const PersistentProgram& program, int l, const ProductTiling& t, int tile, float* shared) {
  const PersistentLayer& layer = program.layers[l];
  const StepParams& params = *program.params;
  const std::uint64_t dropout_key =
      synthetic::dropout_key(params.seed, params.run, params.step, static_cast<std::uint32_t>(l));
  const std::uint64_t first_sample = params.first_sample;
  const float* bias = program.parameters + layer.bias_offset;
  const ProductOperands operands =
      forward_operands(layer.input, program.parameters + layer.weight_offset, layer.fan_in);
  store_tile(shared, t, tile, operands, [&](int sample, int unit, float z) {
    const float relu = fmaxf(z + bias[unit], 0.0f);
    const bool keep = program.drop_probability == 0.0f ||
                      synthetic::dropout_keep_of(dropout_key, first_sample + static_cast<std::uint64_t>(sample),
                                                 static_cast<std::uint32_t>(unit), program.drop_probability);
    layer.output[static_cast<std::size_t>(sample) * layer.fan_out + unit] = keep ? relu * program.keep_scale : 0.0f;
  });
}

// Tile `tile` of layer l's (l >= 1) input gradient: dL/dZ[b, i] of the layer below = (sum_o dL/dZ[b, o] W[o, i])
// through the layer below's ReLU and dropout (its stored activation is positive exactly where both kept the unit).
__device__ void input_gradient_tile(const PersistentProgram& program, int l, const ProductTiling& t, int tile,
                                    float* shared) {
  const PersistentLayer& layer = program.layers[l];
  const ProductOperands operands = input_gradient_operands(
      layer.output_gradient, program.parameters + layer.weight_offset, layer.fan_in, layer.fan_out);
  store_tile(shared, t, tile, operands, [&](int sample, int unit, float value) {
    const std::size_t index = static_cast<std::size_t>(sample) * layer.fan_in + unit;
    layer.input_gradient[index] = __ldcg(layer.input + index) > 0.0f ? value * program.keep_scale : 0.0f;
  });
}

// Sum over the warp, the same bits in every lane (each butterfly step adds the same two values in either order).
__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The output layer for one sample, by one warp: y[b, o] = sum_i H[b, i] W[o, i]; dL/dy = 2 (y - t) / count (count =
// batch x outputs, as mse_loss_and_gradient); the sample's sum of squared errors, in output order; and the last hidden
// layer's dL/dZ[b, i] = (sum_o dL/dy[b, o] W[o, i]) through its ReLU and dropout.
__device__ void head_sample(const PersistentProgram& program, int sample) {
  const PersistentLayer& layer = program.layers[program.layer_count - 1];
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int outputs = layer.fan_out;
  const int width = layer.fan_in;
  const float count = static_cast<float>(program.batch * outputs);
  const float* weights = program.parameters + layer.weight_offset;
  const float* hidden = layer.input + static_cast<std::size_t>(sample) * width;
  float partial[kPersistentMaxOutputs];
#pragma unroll
  for (int o = 0; o < kPersistentMaxOutputs; ++o) partial[o] = 0.0f;
  for (int i = lane; i < width; i += 32) {
    const float h = __ldcg(hidden + i);
#pragma unroll
    for (int o = 0; o < kPersistentMaxOutputs; ++o) {
      if (o < outputs) partial[o] = fmaf(h, weights[static_cast<std::size_t>(o) * width + i], partial[o]);
    }
  }
  float gradient[kPersistentMaxOutputs];
  float squares = 0.0f;
#pragma unroll
  for (int o = 0; o < kPersistentMaxOutputs; ++o) {
    gradient[o] = 0.0f;
    if (o >= outputs) continue;  // uniform over the warp: every lane takes part in each sum
    const float y = warp_sum(partial[o]);
    const std::size_t index = static_cast<std::size_t>(sample) * outputs + o;
    const float difference = y - program.targets[index];
    squares += difference * difference;
    gradient[o] = 2.0f * difference / count;
    if (lane == o) {
      layer.output[index] = y;
      layer.output_gradient[index] = gradient[o];
    }
  }
  if (lane == 0) program.sample_losses[sample] = squares;
  for (int i = lane; i < width; i += 32) {
    float value = 0.0f;
#pragma unroll
    for (int o = 0; o < kPersistentMaxOutputs; ++o) {
      if (o < outputs) value = fmaf(gradient[o], weights[static_cast<std::size_t>(o) * width + i], value);
    }
    layer.input_gradient[static_cast<std::size_t>(sample) * width + i] =
        __ldcg(hidden + i) > 0.0f ? value * program.keep_scale : 0.0f;
  }
}

// The head phase: every sample by one warp of the grid.
__device__ void head_phase(const PersistentProgram& program) {
  const int warps = static_cast<int>(gridDim.x) * kWarps;
  for (int sample = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x) / 32; sample < program.batch;
       sample += warps)
    head_sample(program, sample);
}

// The tail (persistent_tiles.hpp): per row tile of samples, in one block, the last hidden layer's forward tile (every
// unit: one column tile, so row tile r is forward tile r), the head of those samples (a warp each), and every column
// tile of that layer's input gradient for the same rows. What one part writes the next reads in the same block: the
// fences make those writes visible in L2, where the next part's loads (ld.global.cg) look, before the barrier.
__device__ void tail_phase(const PersistentProgram& program, const PersistentPhase& phase, float* shared) {
  const ProductTiling& forward = phase.tiling;
  const ProductTiling& gradient = phase.gradient_tiling;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  for (int row_tile = static_cast<int>(blockIdx.x); row_tile < row_tiles(forward);
       row_tile += static_cast<int>(gridDim.x)) {
    forward_tile(program, phase.layer, forward, row_tile, shared);
    __threadfence();
    __syncthreads();
    const int sample = row_tile * forward.tile_rows + warp;
    if (warp < forward.tile_rows && sample < program.batch) head_sample(program, sample);
    __threadfence();
    __syncthreads();
    if (phase.layer == 0) continue;  // no gradient with respect to the data
    const int columns = column_tiles(gradient);
    for (int column_tile = 0; column_tile < columns; ++column_tile)
      input_gradient_tile(program, phase.layer, gradient, row_tile * columns + column_tile, shared);
  }
}

__device__ __forceinline__ void adam_at(const PersistentProgram& program, std::size_t index, float gradient,
                                        const AdamStep& step) {
  float p = __ldcg(program.parameters + index);
  float m = __ldcg(program.first_moment + index);
  float v = __ldcg(program.second_moment + index);
  adam_element(p, m, v, gradient * program.adam.gradient_scale, step);
  program.parameters[index] = p;
  program.first_moment[index] = m;
  program.second_moment[index] = v;
}

// Adam on the weights of one tile, its gradient sums in shared[tile output] (combine_parts): each thread's weights are
// outputs threadIdx.x, + kPersistentThreads, ... of the tile, whose parameters and moments it loads all at once
// before it updates any (one round trip to L2 instead of one per weight).
__device__ void update_tile_weights(const PersistentProgram& program, const PersistentLayer& layer,
                                    const ProductTiling& t, TileOrigin origin, const float* sums,
                                    const AdamStep& step) {
  constexpr int kMostPerThread = kPartSumFloats / kPersistentThreads;  // a tile's outputs per thread, at the most
  float p[kMostPerThread], m[kMostPerThread], v[kMostPerThread];
  const auto weight_index = [&](int o, std::size_t& index) {
    const TileOrigin at = output_position(t, origin, o);
    index = layer.weight_offset + static_cast<std::size_t>(at.row) * layer.fan_in + at.column;
    return o < tile_outputs(t) && at.row < t.rows && at.column < t.columns;
  };
#pragma unroll
  for (int q = 0; q < kMostPerThread; ++q) {
    std::size_t index = 0;
    p[q] = m[q] = v[q] = 0.0f;
    if (!weight_index(static_cast<int>(threadIdx.x) + q * kPersistentThreads, index)) continue;
    p[q] = __ldcg(program.parameters + index);
    m[q] = __ldcg(program.first_moment + index);
    v[q] = __ldcg(program.second_moment + index);
  }
#pragma unroll
  for (int q = 0; q < kMostPerThread; ++q) {
    const int o = static_cast<int>(threadIdx.x) + q * kPersistentThreads;
    std::size_t index = 0;
    if (!weight_index(o, index)) continue;
    adam_element(p[q], m[q], v[q], sums[o] * program.adam.gradient_scale, step);
    program.parameters[index] = p[q];
    program.first_moment[index] = m[q];
    program.second_moment[index] = v[q];
  }
}

// The step's loss: the samples' sums of squared errors in sample order, over batch x outputs, into its slot.
__device__ void store_loss(const PersistentProgram& program) {
  float total = 0.0f;
  for (int sample = 0; sample < program.batch; ++sample) total += __ldcg(program.sample_losses + sample);
  const std::uint64_t slot = program.params->loss_index;
  const int outputs = program.layers[program.layer_count - 1].fan_out;
  if (slot < program.losses.count) program.losses.values[slot] = total / static_cast<float>(program.batch * outputs);
}

// Every layer's weight gradient dW[o, i] = sum_b dL/dZ[b, o] x[b, i], tile by tile, applied by Adam as it is formed;
// the first column tile of a hidden layer's row block also forms those rows' bias gradient (sum_b dL/dZ[b, o], in
// sample order) and applies it. Nothing of the gradient goes to memory.
__device__ void update_phase(const PersistentProgram& program, float* shared) {
  const AdamStep step = adam_step(program.adam, program.params->correction1, program.params->correction2);
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) store_loss(program);
  for (int item = static_cast<int>(blockIdx.x); item < program.update_tiles; item += static_cast<int>(gridDim.x)) {
    const LayerTile at = locate_update_tile(program.update_tilings, program.layer_count, item);
    const PersistentLayer& layer = program.layers[at.layer];
    const ProductTiling& t = program.update_tilings[at.layer];
    const TileOrigin origin = tile_origin(t, at.tile);
    const ProductOperands operands =
        weight_gradient_operands(layer.output_gradient, layer.input, layer.fan_in, layer.fan_out);
    const bool with_bias = layer.hidden && origin.column == 0;
    float sums[kMicroTile][kMicroTile];
    float bias_gradient = 0.0f;
    multiply_tile(shared, t, origin, operands, with_bias, sums, bias_gradient);
    combine_parts(shared, t, sums);
    update_tile_weights(program, layer, t, origin, shared, step);
    __syncthreads();  // the sums are read: the next tile may stage
    const int bias_row = origin.row + static_cast<int>(threadIdx.x);
    if (with_bias && static_cast<int>(threadIdx.x) < t.tile_rows && bias_row < layer.fan_out)
      adam_at(program, layer.bias_offset + bias_row, bias_gradient, step);
  }
}

// A product's phase: the blocks take its tiles in turn, work(tile) each.
template <typename TileWork>
__device__ void deal_tiles(const ProductTiling& t, TileWork&& work) {
  for (int tile = static_cast<int>(blockIdx.x); tile < tile_count(t); tile += static_cast<int>(gridDim.x)) work(tile);
}

__global__ void __launch_bounds__(kPersistentThreads, 1)
    persistent_step_kernel(const __grid_constant__ PersistentProgram program, int first_phase, int end_phase) {
  extern __shared__ float shared[];
  const cg::grid_group grid = cg::this_grid();
  for (int p = first_phase; p < end_phase; ++p) {
    if (p > first_phase) grid.sync();  // everything the phases before wrote is written and visible
    const PersistentPhase& phase = program.phases[p];
    switch (phase.kind) {
      case PersistentPhaseKind::forward:
        deal_tiles(phase.tiling, [&](int tile) { forward_tile(program, phase.layer, phase.tiling, tile, shared); });
        break;
      case PersistentPhaseKind::head:
        head_phase(program);
        break;
      case PersistentPhaseKind::input_gradient:
        deal_tiles(phase.tiling,
                   [&](int tile) { input_gradient_tile(program, phase.layer, phase.tiling, tile, shared); });
        break;
      case PersistentPhaseKind::tail:
        tail_phase(program, phase, shared);
        break;
      case PersistentPhaseKind::update:
        update_phase(program, shared);
        break;
    }
  }
}

}  // namespace

int persistent_step_blocks_per_sm(std::size_t shared_bytes) {
  // The limit is set to the device's most, the same value whatever the plan: trainers of several plans may hold the
  // kernel at once, and a smaller limit set by one would refuse another's launches.
  int device = 0;
  int per_block = 0;
  cudaFuncAttributes attributes{};
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  MGPU_CUDA_CHECK(cudaFuncGetAttributes(&attributes, persistent_step_kernel));
  const int most = per_block - static_cast<int>(attributes.sharedSizeBytes);
  if (shared_bytes > static_cast<std::size_t>(most)) return 0;
  MGPU_CUDA_CHECK(cudaFuncSetAttribute(persistent_step_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  int blocks = 0;
  MGPU_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, persistent_step_kernel, kPersistentThreads, shared_bytes));
  return blocks;
}

cudaError_t persistent_step(const PersistentProgram& program, int first_phase, int end_phase, int blocks,
                            std::size_t shared_bytes, cudaStream_t stream) {
  cudaLaunchAttribute cooperative{};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(kPersistentThreads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, persistent_step_kernel, program, first_phase, end_phase);
}

}  // namespace mgpu::kernels
