// Purpose: the project's own CUDA kernels (everything of the training step that is not a cuBLAS call) and their
// launchers. Values that change per step are read from a device-resident StepParams, so a captured step replays. The
// element formulas are synthetic_data.hpp's and cpu_mlp.hpp's, so GPU and CPU compute one function.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/adam_element.cuh"
#include "kernels/block_reduce.cuh"
#include "kernels/cuda_kernels.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/last_block.cuh"
#include "kernels/tf32_split_store.cuh"
#include "model/synthetic_data.hpp"
#include "platform/cuda_check.hpp"

namespace mgpu::kernels {
namespace {

constexpr int kThreads = 256;              // elementwise kernels and per-sample blocks
constexpr int kReductionThreads = 1024;    // the single-block loss reduction
constexpr std::size_t kMaxBlocks = 65536;  // grid-stride loops cover the rest

unsigned grid_for(std::size_t items) {
  return static_cast<unsigned>(std::min((items + kThreads - 1) / kThreads, kMaxBlocks));
}

__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

// kVector consecutive floats through one 16-byte access when kVector == 4 (the address must then be 16-byte
// aligned: launchers pick kVector = 4 only when every group starts at a multiple of 4 elements of a cudaMalloc base).
template <int kVector>
__device__ __forceinline__ void load(const float* source, float (&values)[kVector]) {
  if constexpr (kVector == 4) {
    const float4 q = *reinterpret_cast<const float4*>(source);
    values[0] = q.x;
    values[1] = q.y;
    values[2] = q.z;
    values[3] = q.w;
  } else {
    for (int k = 0; k < kVector; ++k) values[k] = source[k];
  }
}
template <int kVector>
__device__ __forceinline__ void store(float* destination, const float (&values)[kVector]) {
  if constexpr (kVector == 4) {
    *reinterpret_cast<float4*>(destination) = make_float4(values[0], values[1], values[2], values[3]);
  } else {
    for (int k = 0; k < kVector; ++k) destination[k] = values[k];
  }
}

__global__ void begin_run_kernel(StepParams* params, std::uint64_t seed, std::uint64_t run) {
  params->seed = seed;
  params->run = run;
  params->next_step = 0;
}

__global__ void advance_step_kernel(StepParams* params, std::uint64_t global_batch, std::uint64_t rank_offset,
                                    float beta1, float beta2, int accumulate_steps) {
  const std::uint64_t step = params->next_step;
  params->step = step;
  params->first_sample = step * global_batch + rank_offset;
  params->loss_index = step;
  // As CudaMlp computed them on the host before: 1 - beta^t in double, then rounded once to float.
  const double t = static_cast<double>(step / static_cast<std::uint64_t>(accumulate_steps) + 1);
  params->correction1 = static_cast<float>(1.0 - pow(static_cast<double>(beta1), t));
  params->correction2 = static_cast<float>(1.0 - pow(static_cast<double>(beta2), t));
  params->next_step = step + 1;
}

__global__ void teacher_weights_kernel(float* teacher, std::uint64_t seed, int outputs, int inputs) {
  const std::size_t count = static_cast<std::size_t>(outputs) * inputs;
  for (std::size_t i = global_thread(); i < count; i += grid_stride()) {
    teacher[i] =
        synthetic::teacher_weight(seed, static_cast<std::uint32_t>(i / inputs), static_cast<std::uint32_t>(i % inputs));
  }
}

// The features, parallel over (sample, feature): block (x, y) writes kFeaturesPerThread * kThreads consecutive
// features of sample y (coalesced), each thread mixing its sample's key once for all of its features. The features
// are compute-bound (hashing, log, cos), so the work is spread over every element rather than one block per sample.
constexpr int kFeaturesPerThread = 4;

__global__ void generate_features_kernel(float* x, const StepParams* params, int count, int inputs) {
  const std::uint64_t seed = params->seed;
  for (int i = blockIdx.y; i < count; i += gridDim.y) {
    const std::uint64_t key = synthetic::sample_key(seed, params->first_sample + i);
    float* row = x + static_cast<std::size_t>(i) * inputs;
    const int first = blockIdx.x * kFeaturesPerThread * kThreads + threadIdx.x;
#pragma unroll
    for (int e = 0; e < kFeaturesPerThread; ++e) {
      const int j = first + e * kThreads;
      if (j < inputs) row[j] = synthetic::feature_of(key, static_cast<std::uint32_t>(j));
    }
  }
}

// One block per sample: each teacher projection of the sample's features, summed in a fixed order. Up to
// kProjectionsPerPass projections share one pass over the row (one read of each feature, several loads in flight);
// each is still summed by thread j % blockDim.x in j order, then over the block, whatever the number per pass.
constexpr int kProjectionsPerPass = 4;

__global__ void generate_targets_kernel(const float* __restrict__ x, float* __restrict__ targets,
                                        const float* __restrict__ teacher, int inputs, int outputs) {
  const int i = blockIdx.x;
  const float* row = x + static_cast<std::size_t>(i) * inputs;
  for (int first = 0; first < outputs; first += kProjectionsPerPass) {
    const int count = min(kProjectionsPerPass, outputs - first);
    float partial[kProjectionsPerPass] = {};
    for (int j = threadIdx.x; j < inputs; j += blockDim.x) {
      const float feature = row[j];
#pragma unroll
      for (int k = 0; k < kProjectionsPerPass; ++k) {
        if (k < count) partial[k] += teacher[static_cast<std::size_t>(first + k) * inputs + j] * feature;
      }
    }
    for (int k = 0; k < count; ++k) {
      const float projection = block_sum(partial[k]);
      if (threadIdx.x == 0)
        targets[static_cast<std::size_t>(i) * outputs + first + k] = synthetic::teacher_target(projection, inputs);
    }
  }
}

__global__ void initialize_weights_kernel(float* weights, std::uint64_t seed, std::uint64_t run,
                                          std::size_t first_index, std::size_t count, int fan_in, int fan_out) {
  for (std::size_t i = global_thread(); i < count; i += grid_stride()) {
    weights[i] = synthetic::initial_weight(seed, run, first_index + i, fan_in, fan_out);
  }
}

// Each thread handles kGroups groups of kVector consecutive units of one row (width % kVector == 0), the groups a
// block apart (coalesced), all loaded before the first is used: several loads in flight per thread, the mask key and
// the step's values read once for all of them. One group per thread measured latency-bound at large batch 4096 on
// H200 (Nsight Compute: 2.5 TB/s for a 4096 x 1024 layer, counting reads and writes).
template <int kVector, int kGroups>
__global__ void bias_relu_dropout_kernel(float* __restrict__ z, const float* __restrict__ bias, int batch, int width,
                                         std::uint32_t layer, float drop_probability, float keep_scale,
                                         const StepParams* params, __nv_bfloat16* __restrict__ z_bf16,
                                         SplitRows z_split) {
  wait_for_previous_kernel();  // launched dependent (dependent_launch.cuh): its input is the last kernel's output
  allow_next_kernel_to_start();
  // The layer's mask key once per thread: the per-unit hash is then one mix (two 64-bit multiplies), not five.
  const std::uint64_t dropout_key = synthetic::dropout_key(params->seed, params->run, params->step, layer);
  const std::uint64_t first_sample = params->first_sample;
  // 32-bit indices (the launcher checks that they suffice): a 64-bit division is a long instruction sequence.
  const unsigned groups_per_row = static_cast<unsigned>(width / kVector);
  const unsigned groups = static_cast<unsigned>(batch) * groups_per_row;
  for (unsigned base = blockIdx.x * blockDim.x * kGroups + threadIdx.x; base < groups;
       base += gridDim.x * blockDim.x * kGroups) {
    float values[kGroups][kVector];
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const unsigned group = base + g * blockDim.x;
      if (group < groups) load<kVector>(z + static_cast<std::size_t>(group) * kVector, values[g]);
    }
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
      const unsigned group = base + g * blockDim.x;
      if (group >= groups) break;
      const unsigned row = group / groups_per_row;
      const int first_unit = static_cast<int>(group - row * groups_per_row) * kVector;
      const std::size_t first = static_cast<std::size_t>(group) * kVector;
      for (int k = 0; k < kVector; ++k) {
        const int unit = first_unit + k;
        const float relu = fmaxf(values[g][k] + bias[unit], 0.0f);
        const bool keep =
            drop_probability == 0.0f || synthetic::dropout_keep_of(dropout_key, first_sample + row,
                                                                   static_cast<std::uint32_t>(unit), drop_probability);
        values[g][k] = keep ? relu * keep_scale : 0.0f;
      }
      store<kVector>(z + first, values[g]);
      if (z_bf16 != nullptr) {
        for (int k = 0; k < kVector; ++k) z_bf16[first + k] = __float2bfloat16(values[g][k]);
      }
      if (z_split.data != nullptr) {
        for (int k = 0; k < kVector; ++k) store_split(z_split, row, first_unit + k, values[g][k]);
      }
    }
  }
}

// A block owns kBiasColumns * kVector consecutive units (kVector per lane of x, one 16-byte access for kVector 4) and a
// range of rows, walked by kBiasRowLanes lanes of y: each load of a warp covers consecutive floats of one row
// (coalesced). Each lane sums its rows in row order; the lanes' sums are then added in lane order. With one row block
// that is the bias gradient; with several, each block stores its column sums in the workspace and the last block of
// the column range adds them in row-block order (last_block.cuh). Every column is summed in the same order whatever
// kVector is, so the bias gradient depends on the shape alone, not on timing or alignment.
constexpr int kBiasColumns = 32;
constexpr int kBiasRowLanes = 16;
constexpr int kBiasRowsInFlight = 4;  // rows each lane loads before it uses them (loads in flight per thread)

struct BiasGradientSplit {
  int vector = 1;  // units per lane of x
  int rows_per_block = 0;
  int row_blocks = 1;
  int column_blocks = 1;
};

// The lanes' sums of a block, added in lane order; valid in lane y == 0.
template <int kVector>
__device__ __forceinline__ void sum_row_lanes(float (&sums)[kVector]) {
  __shared__ float lane_sums[kBiasRowLanes][kBiasColumns * kVector + 1];
  __syncthreads();  // a previous call's readers are done
  for (int v = 0; v < kVector; ++v) lane_sums[threadIdx.y][threadIdx.x * kVector + v] = sums[v];
  __syncthreads();
  if (threadIdx.y != 0) return;
  for (int v = 0; v < kVector; ++v) {
    sums[v] = 0.0f;
    for (int lane = 0; lane < kBiasRowLanes; ++lane) sums[v] += lane_sums[lane][threadIdx.x * kVector + v];
  }
}

// kSplit: also writes each gradient's TF32 split (tf32x3). A compile-time choice: with the split's store behind a
// run-time test, untaken, bf16's step at large 4096 was 2.5% slower on one H100.
template <int kVector, bool kSplit>
__global__ void relu_dropout_backward_bias_kernel(float* __restrict__ grad, const float* __restrict__ h,
                                                  float* bias_grad, int batch, int width, float keep_scale,
                                                  bool accumulate, __nv_bfloat16* __restrict__ grad_bf16,
                                                  int rows_per_block, ReductionWorkspace workspace,
                                                  SplitRows grad_split) {
  wait_for_previous_kernel();  // launched dependent (dependent_launch.cuh): its input is the last kernel's output
  allow_next_kernel_to_start();
  const int unit = (blockIdx.x * kBiasColumns + threadIdx.x) * kVector;  // the lane's first unit
  const int row_begin = blockIdx.y * rows_per_block;
  const int row_end = min(batch, row_begin + rows_per_block);
  // In place on the lane's kVector units of row `row`; adds the new values to sums.
  const auto apply = [&](int row, float(&g)[kVector], const float(&activation)[kVector], float(&sums)[kVector]) {
    const std::size_t i = static_cast<std::size_t>(row) * width + unit;
    for (int v = 0; v < kVector; ++v) {
      g[v] = activation[v] > 0.0f ? g[v] * keep_scale : 0.0f;
      sums[v] += g[v];
      if (grad_bf16 != nullptr) grad_bf16[i + v] = __float2bfloat16(g[v]);
      if constexpr (kSplit) store_split(grad_split, row, unit + v, g[v]);
    }
    store<kVector>(grad + i, g);
  };
  float sums[kVector] = {};
  if (unit < width) {
    int row = row_begin + threadIdx.y;
    for (; row + (kBiasRowsInFlight - 1) * kBiasRowLanes < row_end; row += kBiasRowsInFlight * kBiasRowLanes) {
      float g[kBiasRowsInFlight][kVector], activation[kBiasRowsInFlight][kVector];
#pragma unroll
      for (int r = 0; r < kBiasRowsInFlight; ++r) {
        const std::size_t i = static_cast<std::size_t>(row + r * kBiasRowLanes) * width + unit;
        load<kVector>(grad + i, g[r]);
        load<kVector>(h + i, activation[r]);
      }
#pragma unroll
      for (int r = 0; r < kBiasRowsInFlight; ++r) {
        apply(row + r * kBiasRowLanes, g[r], activation[r], sums);
      }
    }
    for (; row < row_end; row += kBiasRowLanes) {
      const std::size_t i = static_cast<std::size_t>(row) * width + unit;
      float g[kVector], activation[kVector];
      load<kVector>(grad + i, g);
      load<kVector>(h + i, activation);
      apply(row, g, activation, sums);
    }
  }
  if (bias_grad == nullptr) return;  // uniform over the grid: no block waits at a barrier below
  sum_row_lanes<kVector>(sums);
  const bool stores = threadIdx.y == 0 && unit < width;
  const auto store_bias = [&](const float(&totals)[kVector]) {
    if (!stores) return;
    for (int v = 0; v < kVector; ++v) bias_grad[unit + v] = accumulate ? bias_grad[unit + v] + totals[v] : totals[v];
  };
  if (gridDim.y == 1) {
    store_bias(sums);
    return;
  }
  // Several row blocks: the workspace holds [row block][width] column sums.
  if (stores) store<kVector>(workspace.partials + static_cast<std::size_t>(blockIdx.y) * width + unit, sums);
  if (!arrives_last(workspace.counters + blockIdx.x, gridDim.y)) return;
  float lane_sums[kVector] = {};  // lane y adds row blocks y, y + kBiasRowLanes, ... in order; then the lanes, in order
  if (unit < width) {
    for (int block = threadIdx.y; block < static_cast<int>(gridDim.y); block += kBiasRowLanes) {
      const float* partial = workspace.partials + static_cast<std::size_t>(block) * width + unit;
      for (int v = 0; v < kVector; ++v) lane_sums[v] += __ldcg(partial + v);
    }
  }
  sum_row_lanes<kVector>(lane_sums);
  store_bias(lane_sums);
  if (threadIdx.x == 0 && threadIdx.y == 0) workspace.counters[blockIdx.x] = 0;
}

__global__ void mse_loss_and_gradient_kernel(const float* __restrict__ y, const float* __restrict__ targets, int count,
                                             float* __restrict__ grad_y, LossSlots losses, const StepParams* params,
                                             __nv_bfloat16* __restrict__ grad_y_bf16, SplitRows grad_y_split) {
  wait_for_previous_kernel();  // launched dependent (dependent_launch.cuh): its input is the last kernel's output
  allow_next_kernel_to_start();
  // kLossLoadsInFlight values per thread loaded before the first is used (one block walks the whole batch: latency,
  // not bytes); each thread still adds its values in index order.
  constexpr int kLossLoadsInFlight = 4;
  float partial = 0.0f;
  const int stride = static_cast<int>(blockDim.x);
  for (int base = threadIdx.x; base < count; base += kLossLoadsInFlight * stride) {
    float diffs[kLossLoadsInFlight];
#pragma unroll
    for (int r = 0; r < kLossLoadsInFlight; ++r) {
      const int i = base + r * stride;
      diffs[r] = i < count ? y[i] - targets[i] : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kLossLoadsInFlight; ++r) {
      const int i = base + r * stride;
      if (i >= count) break;
      partial += diffs[r] * diffs[r];
      const float gradient = 2.0f * diffs[r] / static_cast<float>(count);
      grad_y[i] = gradient;
      if (grad_y_bf16 != nullptr) grad_y_bf16[i] = __float2bfloat16(gradient);
      if (grad_y_split.data != nullptr) {
        const int row = i / grad_y_split.width;
        store_split(grad_y_split, row, i - row * grad_y_split.width, gradient);
      }
    }
  }
  const float sum = block_sum(partial);
  const std::uint64_t slot = params->loss_index;
  if (threadIdx.x == 0 && slot < losses.count) losses.values[slot] = sum / static_cast<float>(count);
}

template <int kVector>
__global__ void adam_kernel(float* parameters, const float* gradients, float* first_moment, float* second_moment,
                            std::size_t count, AdamConstants adam, const StepParams* params,
                            __nv_bfloat16* parameters_bf16, const __nv_bfloat16* gradients_bf16,
                            WeightSplit weight_split) {
  wait_for_previous_kernel();  // launched dependent: the gradients are written by the kernels ahead
  allow_next_kernel_to_start();
  const AdamStep step = adam_step(adam, params->correction1, params->correction2);
  const std::size_t groups = count / kVector;
  for (std::size_t group = global_thread(); group < groups; group += grid_stride()) {
    const std::size_t first = group * kVector;
    float p[kVector], g[kVector], m[kVector], v[kVector];
    load<kVector>(parameters + first, p);
    if (gradients_bf16 != nullptr) {
      for (int k = 0; k < kVector; ++k) g[k] = __bfloat162float(gradients_bf16[first + k]);
    } else {
      load<kVector>(gradients + first, g);
    }
    load<kVector>(first_moment + first, m);
    load<kVector>(second_moment + first, v);
    for (int k = 0; k < kVector; ++k) {
      adam_element(p[k], m[k], v[k], g[k] * adam.gradient_scale, step);
    }
    store<kVector>(parameters + first, p);
    store<kVector>(first_moment + first, m);
    store<kVector>(second_moment + first, v);
    if (parameters_bf16 != nullptr) {
      for (int k = 0; k < kVector; ++k) parameters_bf16[first + k] = __float2bfloat16(p[k]);
    }
    if (weight_split.data != nullptr) {
      for (int k = 0; k < kVector; ++k) store_weight_split(weight_split, first + k, p[k]);
    }
  }
}

__global__ void cast_to_bf16_kernel(const float* source, __nv_bfloat16* destination, std::size_t count) {
  for (std::size_t i = global_thread(); i < count; i += grid_stride()) destination[i] = __float2bfloat16(source[i]);
}

__global__ void fill_kernel(float* destination, std::size_t count, float value) {
  for (std::size_t i = global_thread(); i < count; i += grid_stride()) destination[i] = value;
}

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

// Enough blocks to fill the GPU several times over (132 SMs on an H200, at most 4 blocks of 512 threads each), each
// of at least kBiasMinRowsPerBlock rows (a few loads in flight per lane) and at most kBiasMaxRowBlocks row blocks (the
// workspace, and the last block's sum). A function of the shape alone, so the same bits on any GPU; lanes of 4 units
// (16-byte accesses) where the width allows and the batch is tall. Small batches keep one row block and one unit per
// lane: the most blocks for a short matrix.
constexpr int kBiasTargetBlocks = 1024;
constexpr int kBiasMinRowsPerBlock = kBiasRowLanes * kBiasRowsInFlight;
constexpr int kBiasMaxRowBlocks = 64;

BiasGradientSplit bias_gradient_split(int batch, int width) {
  BiasGradientSplit split;
  split.vector = width % 4 == 0 && batch > kBiasMinRowsPerBlock ? 4 : 1;
  const int block_columns = kBiasColumns * split.vector;
  split.column_blocks = (width + block_columns - 1) / block_columns;
  const int wanted_row_blocks = std::max(1, kBiasTargetBlocks / split.column_blocks);
  int rows = (batch + wanted_row_blocks - 1) / wanted_row_blocks;
  rows = std::max(rows, (batch + kBiasMaxRowBlocks - 1) / kBiasMaxRowBlocks);
  rows = (rows + kBiasMinRowsPerBlock - 1) / kBiasMinRowsPerBlock * kBiasMinRowsPerBlock;  // whole rounds of loads
  split.rows_per_block = rows;
  split.row_blocks = (batch + rows - 1) / rows;
  return split;
}

}  // namespace

int bias_gradient_row_blocks(int batch, int width) { return bias_gradient_split(batch, width).row_blocks; }

std::size_t bias_gradient_workspace_floats(int batch, int width) {
  const int row_blocks = bias_gradient_row_blocks(batch, width);
  return row_blocks > 1 ? static_cast<std::size_t>(row_blocks) * width : 0;
}

std::size_t bias_gradient_workspace_counters(int batch, int width) {
  return bias_gradient_row_blocks(batch, width) > 1 ? bias_gradient_split(batch, width).column_blocks : 0;
}

void begin_run(StepParams* params, std::uint64_t seed, std::uint64_t run, cudaStream_t stream) {
  begin_run_kernel<<<1, 1, 0, stream>>>(params, seed, run);
  MGPU_CUDA_CHECK_LAUNCH();
}

void advance_step(StepParams* params, std::uint64_t global_batch, std::uint64_t rank_offset, float beta1, float beta2,
                  int accumulate_steps, cudaStream_t stream) {
  MGPU_REQUIRE(accumulate_steps >= 1, "accumulate_steps must be at least 1");
  advance_step_kernel<<<1, 1, 0, stream>>>(params, global_batch, rank_offset, beta1, beta2, accumulate_steps);
  MGPU_CUDA_CHECK_LAUNCH();
}

void teacher_weights(float* teacher, std::uint64_t seed, int outputs, int inputs, cudaStream_t stream) {
  const std::size_t count = static_cast<std::size_t>(outputs) * inputs;
  if (count == 0) return;
  teacher_weights_kernel<<<grid_for(count), kThreads, 0, stream>>>(teacher, seed, outputs, inputs);
  MGPU_CUDA_CHECK_LAUNCH();
}

void generate_batch(float* x, float* targets, const float* teacher, const StepParams* params, int count, int inputs,
                    int outputs, cudaStream_t stream) {
  if (count == 0) return;
  constexpr int kMaxSampleBlocks = 65535;  // grid y; more samples are strided
  const dim3 feature_grid(
      static_cast<unsigned>((inputs + kFeaturesPerThread * kThreads - 1) / (kFeaturesPerThread * kThreads)),
      static_cast<unsigned>(std::min(count, kMaxSampleBlocks)));
  generate_features_kernel<<<feature_grid, kThreads, 0, stream>>>(x, params, count, inputs);
  MGPU_CUDA_CHECK_LAUNCH();
  generate_targets_kernel<<<count, kThreads, 0, stream>>>(x, targets, teacher, inputs, outputs);
  MGPU_CUDA_CHECK_LAUNCH();
}

void initialize_weights(float* weights, std::uint64_t seed, std::uint64_t run, std::size_t first_index,
                        std::size_t count, int fan_in, int fan_out, cudaStream_t stream) {
  if (count == 0) return;
  initialize_weights_kernel<<<grid_for(count), kThreads, 0, stream>>>(weights, seed, run, first_index, count, fan_in,
                                                                      fan_out);
  MGPU_CUDA_CHECK_LAUNCH();
}

void bias_relu_dropout(float* z, const float* bias, int batch, int width, std::uint32_t layer, float drop_probability,
                       const StepParams* params, cudaStream_t stream, __nv_bfloat16* z_bf16, const SplitRows& z_split) {
  const std::size_t count = static_cast<std::size_t>(batch) * width;
  if (count == 0) return;
  MGPU_REQUIRE(count < (std::size_t{1} << 32), "bias_relu_dropout: more than 2^32 - 1 activations");
  const float keep_scale = dropout_keep_scale(drop_probability);
  // Four groups per thread where that still leaves 256 blocks or more (tall batches); one otherwise.
  constexpr std::size_t kManyGroups = std::size_t{kThreads} * 4 * 256;
  if (width % 4 == 0 && count / 4 >= kManyGroups) {
    MGPU_CUDA_CHECK(launch_dependent(bias_relu_dropout_kernel<4, 4>, grid_for(count / 16), kThreads, 0, stream, z, bias,
                                     batch, width, layer, drop_probability, keep_scale, params, z_bf16, z_split));
  } else if (width % 4 == 0) {
    MGPU_CUDA_CHECK(launch_dependent(bias_relu_dropout_kernel<4, 1>, grid_for(count / 4), kThreads, 0, stream, z, bias,
                                     batch, width, layer, drop_probability, keep_scale, params, z_bf16, z_split));
  } else {
    MGPU_CUDA_CHECK(launch_dependent(bias_relu_dropout_kernel<1, 1>, grid_for(count), kThreads, 0, stream, z, bias,
                                     batch, width, layer, drop_probability, keep_scale, params, z_bf16, z_split));
  }
}

void relu_dropout_backward_bias(float* grad, const float* h, float* bias_grad, int batch, int width,
                                float drop_probability, bool accumulate, cudaStream_t stream, __nv_bfloat16* grad_bf16,
                                const ReductionWorkspace& workspace, const SplitRows& grad_split) {
  if (batch == 0 || width == 0) return;
  const float keep_scale = dropout_keep_scale(drop_probability);
  const BiasGradientSplit split = bias_gradient_split(batch, width);
  if (bias_grad != nullptr) {
    MGPU_REQUIRE(workspace.has_room(bias_gradient_workspace_floats(batch, width),
                                    bias_gradient_workspace_counters(batch, width)),
                 "the bias gradient's workspace is too small for batch " + std::to_string(batch) + " x width " +
                     std::to_string(width));
  }
  const dim3 block(kBiasColumns, kBiasRowLanes);
  const dim3 grid(static_cast<unsigned>(split.column_blocks), static_cast<unsigned>(split.row_blocks));
  // 16-byte accesses need 16-byte aligned rows (a cudaMalloc base and a width that is a multiple of 4).
  MGPU_REQUIRE(split.vector == 1 || (aligned16(grad) && aligned16(h) && aligned16(workspace.partials)),
               "relu_dropout_backward_bias: grad, h and the workspace must start on 16-byte boundaries");
  const bool splits = grad_split.data != nullptr;
  const auto kernel =
      split.vector == 4
          ? (splits ? relu_dropout_backward_bias_kernel<4, true> : relu_dropout_backward_bias_kernel<4, false>)
          : (splits ? relu_dropout_backward_bias_kernel<1, true> : relu_dropout_backward_bias_kernel<1, false>);
  MGPU_CUDA_CHECK(launch_dependent(kernel, grid, block, 0, stream, grad, h, bias_grad, batch, width, keep_scale,
                                   accumulate, grad_bf16, split.rows_per_block, workspace, grad_split));
}

void mse_loss_and_gradient(const float* y, const float* targets, int count, float* grad_y, LossSlots losses,
                           const StepParams* params, cudaStream_t stream, __nv_bfloat16* grad_y_bf16,
                           const SplitRows& grad_y_split) {
  MGPU_REQUIRE(count > 0, "the MSE loss needs at least one value");
  MGPU_REQUIRE(grad_y_split.data == nullptr || (grad_y_split.width > 0 && count % grad_y_split.width == 0),
               "mse_loss_and_gradient: the split's rows do not tile the " + std::to_string(count) + " values");
  MGPU_CUDA_CHECK(launch_dependent(mse_loss_and_gradient_kernel, 1, kReductionThreads, 0, stream, y, targets, count,
                                   grad_y, losses, params, grad_y_bf16, grad_y_split));
}

void adam_update(float* parameters, const float* gradients, float* first_moment, float* second_moment,
                 std::size_t count, const AdamConstants& adam, const StepParams* params, cudaStream_t stream,
                 __nv_bfloat16* parameters_bf16, const __nv_bfloat16* gradients_bf16, const WeightSplit& weight_split) {
  if (count == 0) return;
  // float4 only where every buffer of the range starts on a 16-byte boundary (a bucket may start anywhere).
  const bool vector4 = count % 4 == 0 && aligned16(parameters) && aligned16(gradients) && aligned16(first_moment) &&
                       aligned16(second_moment);
  if (vector4) {
    MGPU_CUDA_CHECK(launch_dependent(adam_kernel<4>, grid_for(count / 4), kThreads, 0, stream, parameters, gradients,
                                     first_moment, second_moment, count, adam, params, parameters_bf16, gradients_bf16,
                                     weight_split));
  } else {
    MGPU_CUDA_CHECK(launch_dependent(adam_kernel<1>, grid_for(count), kThreads, 0, stream, parameters, gradients,
                                     first_moment, second_moment, count, adam, params, parameters_bf16, gradients_bf16,
                                     weight_split));
  }
}

void cast_to_bf16(const float* source, __nv_bfloat16* destination, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  cast_to_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(source, destination, count);
  MGPU_CUDA_CHECK_LAUNCH();
}

void fill(float* destination, std::size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_kernel<<<grid_for(count), kThreads, 0, stream>>>(destination, count, value);
  MGPU_CUDA_CHECK_LAUNCH();
}

}  // namespace mgpu::kernels
