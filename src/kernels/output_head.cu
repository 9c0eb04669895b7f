// Purpose: the fused output head of output_head.cuh: one block, a group of threads per sample, H's row held in
// registers, W_L staged in shared memory; the row's outputs summed by warp shuffles, the loss over the block in a fixed
// order.
#include "kernels/block_reduce.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"

namespace mgpu::kernels {
namespace {

// Why one block, and where it stops. At the step's small batches the output layer's work is tiny (medium batch 64:
// H is 64 x 64, W_L 3 x 64; large batch 32: 32 x 256 and 3 x 256), but as three kernels (forward GEMM, loss, input
// gradient GEMM) it is three links of the step's chain of dependent launches, each mostly launch and memory
// latency. In one block a sample's row of Y, dL/dY and dL/dX need no other block's data, and the loss is a block
// reduction: no grid-wide synchronisation, no float atomics, one global round trip for the loads (H, T and W_L all
// requested at once after the dependent-launch wait), then shuffles, then the stores.
// The threshold: each thread holds at most kValuesPerThread = 16 values of H, all loaded at once into registers. Then
// one SM reads at most 64 KB of H and writes as much of dL/dX, under a microsecond at its share of L2 bandwidth, and
// the register budget of a 1024-thread block (64 per thread) holds without spilling. A larger head would grow
// linearly on its single SM, where the GEMMs it replaces spread over many: it is left to them.
constexpr int kMaxThreads = 1024;
constexpr int kValuesPerThread = 16;
constexpr int kMaxGroup = 32;  // threads per sample: at most a warp, so that a row's sums are warp shuffles
constexpr int kMaxOutputs = 4;
constexpr int kMaxFanIn = kMaxGroup * kValuesPerThread;

// Threads per sample: the largest power of two up to a warp with batch * group <= kMaxThreads (batch 32: 32, batch
// 64: 16). A power of two divides the warp, so a sample's group never straddles two warps.
int group_size(int batch) {
  int group = kMaxGroup;
  while (group > 1 && batch * group > kMaxThreads) group >>= 1;
  return group;
}

// Sum over an aligned group of Group lanes (a power of two), returned to every lane of it. A butterfly: each step
// adds the same two values in every lane (in either order, which float addition does not distinguish), so all lanes
// hold the same bits.
template <int Group>
__device__ __forceinline__ float group_sum(float value) {
#pragma unroll
  for (int offset = Group / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// Thread t serves sample t / Group; its member index m = t % Group takes the columns m, m + Group, ... of the row, so
// a group's loads of one k are Group consecutive floats (coalesced). Threads past the batch (the block is rounded up
// to whole warps) compute on zeros and store nothing: they still take part in the shuffles and barriers. Group is a
// template parameter so that every column offset is an immediate: with it computed at run time the kernel needed
// more than the 64 registers a thread of a 1024-thread block has, and spilled.
template <int Group>
__global__ void __launch_bounds__(kMaxThreads) output_head_kernel(OutputHead head) {
  __shared__ float weights[kMaxOutputs * kMaxFanIn];  // W_L, [fan_out][fan_in]

  // Launched dependent (dependent_launch.cuh): everything is read after the wait. H is the kernel ahead's output.
  // W_L, written only by the optimizer, would be stable behind forward's previous layer in the trainer's step, but
  // reading it early would gain nothing (its loads go out together with H's, in the same round trip), and after the
  // wait the kernel is correct behind any kernel.
  wait_for_previous_kernel();
  allow_next_kernel_to_start();

  const int fan_in = head.fan_in;
  const int fan_out = head.fan_out;
  const int row = static_cast<int>(threadIdx.x) / Group;
  const int member = static_cast<int>(threadIdx.x) % Group;
  const bool active = row < head.batch;
  // This thread's columns are member + k Group for k < columns (none past the batch).
  const int columns = active && member < fan_in ? (fan_in - member + Group - 1) / Group : 0;
  const std::size_t first = static_cast<std::size_t>(active ? row : 0) * fan_in + member;
  const float* h_row = head.hidden + first;

  float h[kValuesPerThread];
#pragma unroll
  for (int k = 0; k < kValuesPerThread; ++k) h[k] = k < columns ? h_row[k * Group] : 0.0f;
  float target[kMaxOutputs];
#pragma unroll
  for (int o = 0; o < kMaxOutputs; ++o)
    target[o] = active && o < fan_out ? head.targets[static_cast<std::size_t>(row) * fan_out + o] : 0.0f;
  for (int e = static_cast<int>(threadIdx.x); e < fan_out * fan_in; e += static_cast<int>(blockDim.x))
    weights[e] = head.weights[e];
  __syncthreads();

  // Y[row, o] = sum_i H[row, i] W[o, i]: each thread's columns, then the group's sum. Only W's fan_out x fan_in are
  // read (shared memory past them is not initialised). fan_out is the same for the whole block, so every lane takes
  // part in each shuffle.
  const float* w_column = weights + member;  // W[o, member + k Group] = w_column[o fan_in + k Group]
  const float count = static_cast<float>(head.batch * fan_out);
  float gradient[kMaxOutputs];
  float squares = 0.0f;  // the row's sum of (Y - T)^2, in output order
#pragma unroll
  for (int o = 0; o < kMaxOutputs; ++o) {
    gradient[o] = 0.0f;
    if (o >= fan_out) continue;
    const float* w_row = w_column + o * fan_in;
    float partial = 0.0f;
#pragma unroll
    for (int k = 0; k < kValuesPerThread; ++k) {
      if (k < columns) partial = fmaf(h[k], w_row[k * Group], partial);
    }
    const float y = group_sum<Group>(partial);
    // As mse_loss_and_gradient: dL/dY = 2 (Y - T) / count.
    const float difference = y - target[o];
    squares += difference * difference;
    gradient[o] = 2.0f * difference / count;
    if (active && member == o % Group) {
      const std::size_t index = static_cast<std::size_t>(row) * fan_out + o;
      head.output[index] = y;
      head.output_gradient[index] = gradient[o];
    }
  }

  // dL/dX[row, i] = sum_o dL/dY[row, o] W[o, i], through layer L - 1's ReLU and dropout: its stored activation (already
  // in registers) is positive exactly where both kept the unit (relu_dropout_backward's rule).
  float* dx_row = head.hidden_gradient + first;
#pragma unroll
  for (int k = 0; k < kValuesPerThread; ++k) {
    if (k >= columns) continue;
    float value = 0.0f;
#pragma unroll
    for (int o = 0; o < kMaxOutputs; ++o) {
      if (o < fan_out) value = fmaf(gradient[o], w_column[o * fan_in + k * Group], value);
    }
    dx_row[k * Group] = h[k] > 0.0f ? value * head.keep_scale : 0.0f;
  }

  // The loss: one value per sample (its group's first thread), summed over the block in thread order.
  const float total = block_sum(active && member == 0 ? squares : 0.0f);
  const std::uint64_t slot = head.params->loss_index;
  if (threadIdx.x == 0 && slot < head.losses.count) head.losses.values[slot] = total / count;
}

}  // namespace

bool output_head_supported(int batch, int fan_in, int fan_out) {
  return batch >= 1 && batch <= kMaxThreads && fan_out >= 1 && fan_out <= kMaxOutputs && fan_in >= 1 &&
         fan_in <= group_size(batch) * kValuesPerThread;
}

void output_head(const OutputHead& head, cudaStream_t stream) {
  MGPU_REQUIRE(
      output_head_supported(head.batch, head.fan_in, head.fan_out),
      "the fused output head runs batch <= 1024, fan_out <= 4 and at most 16 values of H per thread, not batch " +
          std::to_string(head.batch) + ", fan_in " + std::to_string(head.fan_in) + ", fan_out " +
          std::to_string(head.fan_out));
  const int group = group_size(head.batch);
  const int threads = (head.batch * group + 31) / 32 * 32;  // whole warps: block_sum and the shuffles need them
  // One instantiation per group size: kernels[log2(group)].
  void (*const kernels[])(OutputHead) = {output_head_kernel<1>, output_head_kernel<2>,  output_head_kernel<4>,
                                         output_head_kernel<8>, output_head_kernel<16>, output_head_kernel<32>};
  int log2_group = 0;
  while ((1 << log2_group) < group) ++log2_group;
  MGPU_CUDA_CHECK(launch_dependent(kernels[log2_group], 1, threads, 0, stream, head));
}

}  // namespace mgpu::kernels
