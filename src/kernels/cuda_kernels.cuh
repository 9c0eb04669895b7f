// Purpose: host launchers for the project's own CUDA kernels (step parameters, synthetic batch, initialisation,
// bias + ReLU + dropout, its backward fused with the bias gradient, MSE loss, Adam, bf16 casts). Plain C++ signatures,
// so .cpp files compiled by g++ can call them; every launcher only enqueues work on `stream` and checks the launch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/reduction_workspace.hpp"
#include "kernels/tf32_split.cuh"

namespace mgpu::kernels {

// Inverted dropout's scale of a kept unit, 1 / (1 - p): one float expression for every kernel and for cpu::mlp_forward.
inline float dropout_keep_scale(float drop_probability) { return 1.0f / (1.0f - drop_probability); }

// Everything of a training step that changes from one step to the next, kept in device memory so that a captured
// step (a CUDA graph) replays correctly: kernels read these values when they run, never as baked-in arguments.
// advance_step writes them at the start of every step from the counter next_step; begin_run resets the counter.
struct StepParams {
  std::uint64_t seed = 0;
  std::uint64_t run = 0;
  std::uint64_t step = 0;          // index of the step within the run, warm-up steps included (the dropout key)
  std::uint64_t first_sample = 0;  // global index of this rank's first sample in the step
  std::uint64_t loss_index = 0;    // slot of the loss array the step writes
  float correction1 = 1.0f;        // Adam's 1 - beta1^t, t = step + 1
  float correction2 = 1.0f;        // Adam's 1 - beta2^t
  std::uint64_t next_step = 0;     // the counter: the step the next advance_step starts
};

// The per-step loss array of a run: the step counted `loss_index` writes values[loss_index] only while that is below
// `count`. Why the bound: set-up replays the captured step many more times than a run has steps (the step-level GEMM
// tuning replays 65 steps from one reset of the counter), and a write per replay past the array landed in whatever
// allocation the driver had placed next to it: another buffer of the step on some hosts, unused memory on others.
struct LossSlots {
  float* values = nullptr;
  std::uint64_t count = 0;
};

// One thread: params->{seed, run} = (seed, run), next_step = 0. Enqueued once per run, before its first step.
void begin_run(StepParams* params, std::uint64_t seed, std::uint64_t run, cudaStream_t stream);
// One thread: step = next_step++, first_sample = step * global_batch + rank_offset, loss_index = step, and the Adam
// corrections for t = step / accumulate_steps + 1, the number of the update the step's accumulation ends with
// (computed in double, as the host did, then rounded to float).
void advance_step(StepParams* params, std::uint64_t global_batch, std::uint64_t rank_offset, float beta1, float beta2,
                  int accumulate_steps, cudaStream_t stream);

// teacher[k * inputs + j] = synthetic::teacher_weight(seed, k, j), k < outputs.
void teacher_weights(float* teacher, std::uint64_t seed, int outputs, int inputs, cudaStream_t stream);

// Global samples params->first_sample .. + count - 1 of params->seed: x[count, inputs] = synthetic::feature, and
// targets[count, outputs] = synthetic::teacher_target(sum_j teacher[k, j] * x[i, j], inputs).
void generate_batch(float* x, float* targets, const float* teacher, const StepParams* params, int count, int inputs,
                    int outputs, cudaStream_t stream);

// weights[i] = synthetic::initial_weight(seed, run, first_index + i, fan_in, fan_out) for i < count, where
// first_index is the layer's offset in the flat parameter buffer (the key cpu::initialize_parameters uses).
void initialize_weights(float* weights, std::uint64_t seed, std::uint64_t run, std::size_t first_index,
                        std::size_t count, int fan_in, int fan_out, cudaStream_t stream);

// In place on z[batch, width] (row-major): z = keep ? max(z + bias[unit], 0) / (1 - p) : 0, the mask being
// synthetic::dropout_keep(seed, run, step, layer, first_sample + row, unit) with the step's values from *params.
// With `z_bf16` (non-null, --precision bf16) the result is also written there rounded to bf16: the next GEMM's input;
// with `z_split` (--precision tf32x3) its TF32 split, likewise.
void bias_relu_dropout(float* z, const float* bias, int batch, int width, std::uint32_t layer, float drop_probability,
                       const StepParams* params, cudaStream_t stream, __nv_bfloat16* z_bf16 = nullptr,
                       const SplitRows& z_split = {});

// In place on grad[batch, width]: grad *= (h > 0 ? 1 / (1 - p) : 0), h being the stored post-dropout activation; and,
// fused into the same pass, bias_grad[unit] = sum over rows of the new grad (the layer's bias gradient; with
// `accumulate`, added to bias_grad[unit]). A null `bias_grad` skips the bias gradient (the fused optimizer sums it
// itself). With `grad_bf16` (non-null) the new grad is also written there rounded to bf16 (the next GEMMs' operand);
// with `grad_split` its TF32 split.
// The rows are split over bias_gradient_row_blocks(batch, width) blocks per column block, so that a tall matrix fills
// the GPU; the blocks' column sums are added in a fixed order, so the result is reproducible bit for bit. With more
// than one row block the bias gradient needs `workspace` (bias_gradient_workspace_floats and _counters; refused if
// short).
int bias_gradient_row_blocks(int batch, int width);
std::size_t bias_gradient_workspace_floats(int batch, int width);
std::size_t bias_gradient_workspace_counters(int batch, int width);
void relu_dropout_backward_bias(float* grad, const float* h, float* bias_grad, int batch, int width,
                                float drop_probability, bool accumulate, cudaStream_t stream,
                                __nv_bfloat16* grad_bf16 = nullptr, const ReductionWorkspace& workspace = {},
                                const SplitRows& grad_split = {});

// MSE over count values: grad_y = 2 (y - t) / count, losses.values[params->loss_index] = mean (y - t)^2 where that
// slot exists (LossSlots). One block, fixed reduction order: the same inputs always give the same loss bits.
// With `grad_y_bf16` (non-null) grad_y is also written there rounded to bf16; with `grad_y_split` (its rows
// grad_y_split.width values each) its TF32 split.
void mse_loss_and_gradient(const float* y, const float* targets, int count, float* grad_y, LossSlots losses,
                           const StepParams* params, cudaStream_t stream, __nv_bfloat16* grad_y_bf16 = nullptr,
                           const SplitRows& grad_y_split = {});

// One Adam step over flat buffers (any contiguous range of them), cpu::adam_update's formula on the gradient
// g * gradient_scale (1 / K for the mean of K accumulated gradients; 1 is exact); the bias corrections 1 - beta^t come
// from *params.
struct AdamConstants {
  float learning_rate = 0.0f;
  float beta1 = 0.0f;
  float beta2 = 0.0f;
  float epsilon = 0.0f;
  float gradient_scale = 1.0f;
};
// With `parameters_bf16` (non-null, --precision bf16) the updated parameters are also written there rounded to bf16
// (the GEMMs' copy of the fp32 master weights), in the same pass. With `gradients_bf16` (non-null, --grad-dtype bf16)
// the gradient is read from there (the bf16 all-reduce's result, widened to fp32 as it is read) instead of
// `gradients`. With `weight_split` (--precision tf32x3) the updated weights' TF32 split is written there, in the same
// pass.
void adam_update(float* parameters, const float* gradients, float* first_moment, float* second_moment,
                 std::size_t count, const AdamConstants& adam, const StepParams* params, cudaStream_t stream,
                 __nv_bfloat16* parameters_bf16 = nullptr, const __nv_bfloat16* gradients_bf16 = nullptr,
                 const WeightSplit& weight_split = {});

// destination[i] = source[i] rounded to bf16 (round to nearest even), i < count.
void cast_to_bf16(const float* source, __nv_bfloat16* destination, std::size_t count, cudaStream_t stream);

// destination[i] = value for i < count (e.g. NaN in the work buffers, CudaMlp::fill_work_buffers_with_nan).
void fill(float* destination, std::size_t count, float value, cudaStream_t stream);

}  // namespace mgpu::kernels
