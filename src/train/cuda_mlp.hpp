// Purpose: the MLP's math on one GPU (the function cpu_mlp.hpp defines): device buffers, synthetic batch, forward,
// MSE loss, backward and Adam, each enqueued on one stream with no host synchronisation and no per-step value baked
// into a launch (those live in a device-resident StepParams), so the whole step can be captured into a CUDA graph.
// Used by CudaTrainer and by the tests that hold the GPU to the float64 reference.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/weight_gradient_adam.cuh"
#include "model/mlp_spec.hpp"
#include "platform/cuda_resources.hpp"
#include "train/cpu_mlp.hpp"
#include "train/gemm/tuned_gemm.hpp"
#include "train/gradient_buckets.hpp"
#include "train/tf32x3_operands.hpp"
#include "train/trainer.hpp"

namespace mgpu {

// Every slot of `buffer` as the loss slots of a run of buffer.size() steps.
inline kernels::LossSlots loss_slots(DeviceBuffer<float>& buffer) { return {buffer.data(), buffer.size()}; }

class CudaMlp {
 public:
  // Allocates every buffer for `batch` samples on the current device; all work goes to `stream` (not owned, must
  // outlive this object). Nothing is allocated after construction (cuBLAS gets its workspace here too), which is what
  // stream capture requires. precision: fp32, tf32 or bf16 (bf16 GEMM operands: a bf16 copy of the weights that Adam
  // keeps in step with the fp32 master weights, and bf16 copies of the activations and activation gradients that the
  // kernels producing them write in the same pass; products, gradients and Adam stay fp32; tf32x3 likewise with the
  // operands' TF32 splits, tf32x3_operands.hpp).
  // reduce_dtype bf16 (--grad-dtype bf16): a bf16 gradient buffer for the all-reduce, which adam() then reads.
  // gemm_selection: how the GEMMs' algorithms are chosen (tuned_gemm.hpp; library_default for the math check's
  // reference step); gemm_tunings: the job's tunings, shared with its other models (none: the process's).
  CudaMlp(const MlpSpec& model, int batch, cudaStream_t stream, Precision precision = Precision::fp32,
          GradDtype reduce_dtype = GradDtype::fp32, GemmSelection gemm_selection = GemmSelection::tuned,
          GemmTunings* gemm_tunings = nullptr);
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  const MlpSpec& model() const noexcept { return model_; }
  int batch() const noexcept { return batch_; }
  std::size_t parameter_count() const noexcept { return parameters_.size(); }

  // --- The training step, in order. Each call only enqueues work on the stream; none bakes a per-step value into a
  // launch: kernels read the step's values from step_params() when they run. ---
  // Glorot-uniform weights and zero biases from (seed, run), as cpu::initialize_parameters; zero Adam moments; the
  // step counter reset to step 0 of run `run` (and the teacher for `seed` built, once per seed).
  void initialize(std::uint64_t seed, std::uint64_t run);
  // The next step's values: step = counter++, first sample = step * global_batch + rank_offset, Adam corrections for
  // update step / accumulate_steps + 1.
  void advance_step(int global_batch, std::uint64_t rank_offset, const AdamSettings& adam, int accumulate_steps = 1);
  // Inputs and targets of the step's global samples (step_params().first_sample onwards).
  void generate_batch();
  // Activations and output for the current inputs, dropout keyed by the step's (seed, run, step, first_sample).
  void forward();
  // MSE of the output against the targets into the step's slot of `losses` (kernels::LossSlots: none for a step
  // counted beyond them), and dL/dy.
  void loss_and_gradient(kernels::LossSlots losses);
  // The fused output head (output_head.cuh), for the fused-optimizer step where output_head_fusable(): forward() and
  // loss_and_gradient() with the output layer's work in one kernel: forward() through the hidden layers, then one
  // kernel that writes the output, the loss and dL/dy, and also the last hidden layer's dL/dZ (backward's first
  // input-gradient GEMM through its ReLU/dropout mask, without its bias gradient, which the fused optimizer sums).
  // The next backward_without_weight_gradients() then starts one layer lower; backward() (both forms with a plan)
  // recomputes that dL/dZ with the bias gradient, so it stays correct too. Three kernels of the step's chain become
  // one; the forward phase then holds that input gradient as well.
  void forward_with_output_head(kernels::LossSlots losses);
  // Whether forward_with_output_head serves this model and batch: fp32 GEMMs (tf32 and bf16 keep the GEMMs of their
  // precision), a hidden layer below the output layer, and an output layer the head's single block runs
  // (kernels::output_head_supported: fan_out <= 4, small batch * fan_in).
  bool output_head_fusable() const;
  // Every parameter's gradient into gradients() (all of it is overwritten, or with `accumulate` added to what it
  // holds), through the last forward's dropout. The weight-gradient GEMMs follow plan.pieces, in plan.order
  // (gradient_buckets.hpp: interleaved with the input gradients, or all after them); after_piece(p) is called once
  // piece p's elements (its bias included) are written, so a caller can hand a finished bucket to the communication
  // stream. With the deferred order no weight is read after the first after_piece call.
  void backward(const BucketPlan& plan, const std::function<void(int piece)>& after_piece = {},
                bool accumulate = false);
  void backward() { backward(whole_plan_); }
  // Backward (both forms) after forward and loss_and_gradient, nothing in between that writes the parameters: its
  // GEMMs read the weights before the kernel ahead has finished (dependent_launch.cuh).
  // Backward without the weight and bias gradients (--fuse-optimizer: adam_with_weight_gradients forms them): every
  // layer's dL/dZ, through ReLU and dropout, and nothing into gradients().
  // With `early`, each layer above the first is also updated during backward (the fused optimizer on that layer
  // alone, on a stream of its own) as soon as its input-gradient GEMM, the last reader of its weights in the step, is
  // done: the updates overlap the rest of backward. adam_with_weight_gradients then updates the first layer and
  // waits for them. The same kernels on the same inputs: the same bits as without `early`.
  struct EarlyUpdate {
    AdamSettings adam;
    float gradient_scale = 1.0f;
    bool accumulated = false;
  };
  void backward_without_weight_gradients(const EarlyUpdate* early = nullptr);
  // Whether early updates shorten this model's step: when the layers above the first carry at least
  // kEarlyUpdateMinWeights weights, enough optimizer traffic to hide behind backward: on 1 x H200 they took large
  // batch 32 (2.0M weights above layer 0) from 0.1568 to 0.1486 ms per step, while for medium (41K) the extra launches
  // and the forked graph cost more than the overlap gives.
  static constexpr std::size_t kEarlyUpdateMinWeights = std::size_t{1} << 20;
  bool early_updates_pay() const;
  // The SM count target of backward's GEMMs (TunedGemm::set_sm_count_target), for a step whose buckets are reduced
  // while backward runs: NCCL's CTAs then hold some SMs. 0 (the default): every SM; forward's GEMMs use every one.
  void set_backward_sm_count_target(int sms) { backward_sm_count_target_ = sms; }
  // One Adam step with the step's corrections over elements [begin, begin + count) (default: all), on the gradient
  // times gradient_scale (1 / K: the mean of K accumulated gradients). With reduce_dtype bf16 the gradient is read from
  // reduced_gradients_bf16().
  void adam(const AdamSettings& adam, std::size_t begin = 0, std::size_t count = static_cast<std::size_t>(-1),
            float gradient_scale = 1.0f);
  // The same on `stream` instead of the model's (a caller that updates reduced buckets beside backward: it orders that
  // stream after the bucket's reduction and joins it back before the parameters are read again).
  void adam(const AdamSettings& adam, std::size_t begin, std::size_t count, float gradient_scale, cudaStream_t stream);
  // The fused optimizer (fp32 only; right after backward_without_weight_gradients, nothing in between: its kernel
  // reads the parameters and moments before the kernel ahead of it has finished, which therefore must not write
  // them; dependent_launch.cuh): every weight's gradient computed from
  // the stored activations and output gradients of the last backward and applied by Adam in one pass, never written;
  // with `accumulated`, gradients() holds the sum of the accumulation's earlier steps, which is added first. The
  // biases likewise (their gradient: the batch sum of dZ). The whole buffer, times gradient_scale, with the step's
  // corrections; after backward_without_weight_gradients(&early), only the layers it did not update, then the compute
  // stream waits for its updates (the step's parameters are all new after this call, on the compute stream).
  void adam_with_weight_gradients(const AdamSettings& adam, float gradient_scale = 1.0f, bool accumulated = false);

  // --- One layer's part of the step, as the step above enqueues it (the hardware probe times each alone). ---
  // Layer `layer`'s forward: its GEMM with, for a hidden layer, bias + ReLU + dropout (in the GEMM's epilogue where
  // our kernel runs the product, else a kernel of its own).
  void forward_layer(std::size_t layer);
  // The output head's kernel alone (forward_with_output_head after the hidden layers; output_head_fusable()).
  void output_head(kernels::LossSlots losses);
  // Layer `layer`'s (>= 1) input gradient: its GEMM, then the previous layer's ReLU/dropout backward, with that
  // layer's bias gradient unless `bias_in_optimizer` (the fused optimizer's backward, which may fold the pass into
  // the GEMM's epilogue). `accumulate`: the bias gradient is added to what the buffer holds.
  void input_gradient(int layer, bool bias_in_optimizer, bool accumulate = false);
  // Layer `layer`'s whole weight gradient (one GEMM; backward cuts it into the bucket plan's pieces).
  void weight_gradient(int layer);
  // The device-resident per-step values the kernels read.
  kernels::StepParams* step_params() noexcept { return step_params_.data(); }

  // --grad-dtype bf16: the bf16 gradient buffer (same layout) the all-reduce works on, and the cast that fills a range
  // of it from gradients(), enqueued on `stream` (the communication stream: the cast is part of the reduction).
  __nv_bfloat16* reduced_gradients_bf16() noexcept { return gradients_bf16_.data(); }
  void cast_gradients_to_bf16(std::size_t begin, std::size_t count, cudaStream_t stream);

  // The flat gradient buffer (layout of MlpSpec::layers()): what the data-parallel step all-reduces in place.
  float* gradients() noexcept { return gradients_.data(); }
  // The flat parameter buffer (the same layout): what the sharded optimizer all-gathers in place.
  float* parameters() noexcept { return parameters_.data(); }

  // --- Synchronous copies and fills for tests and results; never inside a timed run. ---
  std::vector<float> download_parameters() const { return copy_to_host(parameters_, stream_); }
  std::pair<std::vector<float>, std::vector<float>> download_moments() const {
    return {copy_to_host(first_moment_, stream_), copy_to_host(second_moment_, stream_)};
  }
  std::vector<float> download_gradients() const { return copy_to_host(gradients_, stream_); }
  std::vector<float> download_inputs() const { return copy_to_host(inputs_, stream_); }
  std::vector<float> download_targets() const { return copy_to_host(targets_, stream_); }
  std::vector<float> download_output() const { return copy_to_host(output_, stream_); }
  // dL/dZ of layer `layer` (dL/dy for the output layer), [batch, fan_out of the layer], as backward left it.
  std::vector<float> download_output_gradient(int layer) const {
    return copy_to_host(output_gradients_.at(layer), stream_);
  }
  void upload_parameters(const std::vector<float>& parameters);  // and their bf16 copy, with bf16
  std::vector<float> download_bf16_parameters() const;           // the GEMMs' bf16 copy (bf16 only)
  void upload_gradients(const std::vector<float>& gradients) { copy_to_device(gradients_, gradients, stream_); }
  void upload_batch(const std::vector<float>& inputs, const std::vector<float>& targets);
  // Fills activations, output, gradients and scratch with NaN, so that any element a step fails to write shows (the
  // constructor does, once).
  void fill_work_buffers_with_nan();
  // The GEMMs of every step (CudaTrainer's step-level tuning selects among their options).
  TunedGemm& gemm() noexcept { return gemm_; }
  const TunedGemm& gemm() const noexcept { return gemm_; }

 private:
  // The tests drive a model from the host (tests/train/cuda_mlp_host_driver.hpp): the step's values, the teacher, the
  // drop probability and Adam's moments set directly, where the trainer's kernels advance them.
  friend class CudaMlpHostDriver;

  // What the GEMMs read: the fp32 buffers, or with bf16 their bf16 copies (element offsets are the same).
  const void* gemm_parameters(std::size_t offset) const;
  const void* gemm_input(int layer) const;  // the input of layer `layer`: x, or hidden layer - 1
  const void* gradient_operand(int layer, std::size_t offset) const;  // dL/dZ of `layer` from element `offset` on
  // Rows [row_begin, row_begin + rows) of layer l's weight gradient: dW^T[in, rows] = X^T * dZ[:, rows].
  void weight_gradient_rows(int layer, int row_begin, int rows, bool accumulate);
  // Copies the fp32 parameters and inputs into the GEMMs' copies, bf16 or tf32x3 splits (none with fp32 and tf32;
  // after initialisation and uploads).
  void refresh_gemm_parameters();
  void refresh_gemm_inputs();
  void build_teacher(std::uint64_t seed);
  // forward() over layers [0, layer_count) of layers_.
  void forward_layers(std::size_t layer_count);
  // Backward, with the weight-gradient GEMMs of `plan` (in its order) or (null) without weight gradients.
  void backward_pass(const BucketPlan* plan, const std::function<void(int piece)>& after_piece, bool accumulate,
                     const EarlyUpdate* early = nullptr);
  // The fused optimizer on layers [first, last) of layers_, on `stream`.
  void update_layers(std::size_t first, std::size_t last, const AdamSettings& adam, float gradient_scale,
                     bool accumulated, kernels::WeightGradientAdamGrid grid, cudaStream_t stream);

  MlpSpec model_;
  std::vector<DenseLayer> layers_;
  BucketPlan whole_plan_;
  int batch_;
  cudaStream_t stream_;
  DeviceBuffer<unsigned char> gemm_workspace_;     // cuBLASLt's, so that no GEMM allocates during capture
  TunedGemm gemm_;                                 // every product of the step, its algorithm tuned per shape
  DeviceBuffer<kernels::StepParams> step_params_;  // one element
  // The bias gradients' row-block sums (relu_dropout_backward_bias), room for the largest hidden layer, allocated
  // here so that nothing is allocated during capture.
  kernels::ReductionWorkspaceMemory bias_gradient_workspace_;
  Precision precision_;  // of the GEMMs
  bool bf16_ = false;    // --precision bf16: GEMM operands in bf16

  DeviceBuffer<float> parameters_;           // [W0, b0, W1, b1, ..., W_last], MlpSpec::layers() offsets
  DeviceBuffer<float> gradients_;            // same layout: one contiguous buffer, so one all-reduce covers all
  DeviceBuffer<float> first_moment_;         // Adam m
  DeviceBuffer<float> second_moment_;        // Adam v
  DeviceBuffer<float> inputs_;               // x [batch, inputs]
  DeviceBuffer<float> targets_;              // [batch, outputs]
  std::vector<DeviceBuffer<float>> hidden_;  // hidden_[l]: [batch, fan_out of layer l] after bias, ReLU, dropout
  DeviceBuffer<float> output_;               // [batch, outputs]
  // output_gradients_[l]: dL/dZ of layer l, [batch, fan_out of layer l] (after ReLU/dropout backward); every layer
  // keeps its own, so the fused optimizer can form the weight gradients after backward.
  std::vector<DeviceBuffer<float>> output_gradients_;
  DeviceBuffer<float> teacher_;  // [outputs, inputs]
  // bf16 only (empty otherwise): the GEMMs' operands, each the bf16 rounding of the fp32 buffer of the same name.
  DeviceBuffer<__nv_bfloat16> parameters_bf16_;
  DeviceBuffer<__nv_bfloat16> inputs_bf16_;
  std::vector<DeviceBuffer<__nv_bfloat16>> hidden_bf16_;
  // output_gradients_bf16_[l]: the bf16 copy of output_gradients_[l], written with it; every layer keeps its own,
  // so the deferred weight gradients (after the whole chain of input gradients) still find it.
  std::vector<DeviceBuffer<__nv_bfloat16>> output_gradients_bf16_;
  DeviceBuffer<__nv_bfloat16> gradients_bf16_;  // --grad-dtype bf16 only: the all-reduced gradient
  std::unique_ptr<Tf32x3Operands> tf32x3_;      // tf32x3 only: the operands' splits and the split products
  // The fused optimizer's layer table, built once (the buffers it points into never move).
  std::vector<kernels::WeightGradientAdamLayer> fused_layers_;
  // Early updates (backward_without_weight_gradients(&early)): their stream, the event that hands each layer over
  // to it, the event that joins it back, and how many layers (from the top) it has updated in this step.
  CudaStream update_stream_;
  CudaEvent layer_released_{cudaEventDisableTiming};
  CudaEvent updates_done_{cudaEventDisableTiming};
  std::size_t layers_updated_early_ = 0;
  int backward_sm_count_target_ = 0;  // set_backward_sm_count_target()
  // Set by forward_with_output_head, cleared by forward() and by the backward that uses it: the output layer's input
  // gradient (the last hidden layer's dL/dZ) is already written.
  bool output_head_wrote_input_gradient_ = false;
  bool have_teacher_ = false;
  std::uint64_t teacher_seed_ = 0;
  float drop_probability_ = 0.0f;  // the model's; forward and backward use the same
};

}  // namespace mgpu
