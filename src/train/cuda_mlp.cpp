// Purpose: CudaMlp: the forward/backward GEMMs through cuBLASLt (fp32, tf32, bf16 or split-TF32 operands with fp32
// accumulation; column-major view of row-major data, the algorithm of each shape chosen by timing, see
// tuned_gemm.hpp) and the rest of the step through our kernels (bias + ReLU + dropout, its backward fused with the
// bias gradient, loss + gradient, one Adam over the flat buffer), all on one stream, every per-step value read from
// device memory.
#include "train/cuda_mlp.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"
#include "train/fused_update.hpp"

namespace mgpu {

// Layout. Activations are row-major [batch, width] and weights row-major W[out, in]. cuBLAS is column-major, and the
// memory of a row-major [r, c] matrix is the column-major [c, r] matrix (its transpose) with leading dimension c.
// So every product is computed for the transposes, which cuBLAS then finds in our memory as they are
// (gemm(op_a, op_b, m, n, k); leading dimensions: X, dX, W and dW in; Y and dZ out):
//   forward  Y = X W^T   ->  Y^T[out, B]   = W[out, in] X^T[in, B]      W is stored as W^T:   gemm(T, N, out, B, in)
//   weights  dW = dZ^T X ->  dW^T[in, out] = X^T[in, B] dZ[B, out]      dZ is stored as dZ^T: gemm(N, T, in, out, B)
//   inputs   dX = dZ W   ->  dX^T[in, B]   = W^T[in, out] dZ^T[out, B]  both as stored:       gemm(N, N, in, B, out)
//   biases   db = column sums of dZ, fused into the kernel that writes dZ (relu_dropout_backward_bias)
// A block of weight rows [r0, r1) (a GradientPiece) is the same weight product on columns r0.. of dZ^T and dW^T:
//   dW^T[in, r0:r1] = X^T[in, B] dZ[B, r0:r1]:  gemm(N, T, in, r1 - r0, B) with dZ^T + r0 and dW^T + r0 * in.

namespace {

// cuBLAS's recommended workspace on Hopper; handed over once so that no GEMM allocates while a graph is captured.
constexpr std::size_t kGemmWorkspaceBytes = 32u << 20;

kernels::AdamConstants adam_constants(const AdamSettings& adam, float gradient_scale) {
  kernels::AdamConstants constants;
  constants.learning_rate = adam.learning_rate;
  constants.beta1 = adam.beta1;
  constants.beta2 = adam.beta2;
  constants.epsilon = adam.epsilon;
  constants.gradient_scale = gradient_scale;
  return constants;
}

// The most any hidden layer's bias gradient needs of its workspace (kernels::relu_dropout_backward_bias).
std::size_t bias_gradient_workspace_floats(const std::vector<DenseLayer>& layers, int batch) {
  std::size_t floats = 0;
  for (const DenseLayer& layer : layers)
    if (layer.hidden) floats = std::max(floats, kernels::bias_gradient_workspace_floats(batch, layer.fan_out));
  return floats;
}
std::size_t bias_gradient_workspace_counters(const std::vector<DenseLayer>& layers, int batch) {
  std::size_t counters = 0;
  for (const DenseLayer& layer : layers)
    if (layer.hidden) counters = std::max(counters, kernels::bias_gradient_workspace_counters(batch, layer.fan_out));
  return counters;
}

}  // namespace

CudaMlp::CudaMlp(const MlpSpec& model, int batch, cudaStream_t stream, Precision precision, GradDtype reduce_dtype,
                 GemmSelection gemm_selection, GemmTunings* gemm_tunings)
    : model_(model),
      layers_(model.layers()),
      whole_plan_(whole_buffer_plan(model)),
      batch_(batch),
      stream_(stream),
      gemm_workspace_(kGemmWorkspaceBytes),
      gemm_(stream, compute_type_for(precision), operand_type_for(precision), gemm_workspace_.data(),
            gemm_workspace_.bytes(), gemm_selection, gemm_tunings),
      step_params_(1),
      bias_gradient_workspace_(bias_gradient_workspace_floats(layers_, batch),
                               bias_gradient_workspace_counters(layers_, batch), stream),
      precision_(precision),
      bf16_(precision == Precision::bf16),
      parameters_(model.parameter_count()),
      gradients_(model.parameter_count()),
      first_moment_(model.parameter_count()),
      second_moment_(model.parameter_count()),
      inputs_(static_cast<std::size_t>(batch) * model.input_width()),
      targets_(static_cast<std::size_t>(batch) * model.output_width()),
      output_(static_cast<std::size_t>(batch) * model.output_width()),
      teacher_(static_cast<std::size_t>(model.output_width()) * model.input_width()),
      drop_probability_(static_cast<float>(model.dropout)) {
  MGPU_REQUIRE(batch > 0, "the local batch must hold at least one sample");
  for (const DenseLayer& layer : layers_) {
    if (layer.hidden) hidden_.emplace_back(static_cast<std::size_t>(batch) * layer.fan_out);
  }
  for (const DenseLayer& layer : layers_)
    output_gradients_.emplace_back(static_cast<std::size_t>(batch) * layer.fan_out);
  if (bf16_) {
    parameters_bf16_ = DeviceBuffer<__nv_bfloat16>(model.parameter_count());
    inputs_bf16_ = DeviceBuffer<__nv_bfloat16>(inputs_.size());
    for (const DeviceBuffer<float>& hidden : hidden_) hidden_bf16_.emplace_back(hidden.size());
    for (const DeviceBuffer<float>& gradient : output_gradients_) output_gradients_bf16_.emplace_back(gradient.size());
  }
  if (reduce_dtype == GradDtype::bf16) gradients_bf16_ = DeviceBuffer<__nv_bfloat16>(model.parameter_count());
  if (precision == Precision::tf32x3) tf32x3_ = std::make_unique<Tf32x3Operands>(model, batch);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    fused_layers_.push_back(kernels::weight_gradient_adam_layer(
        layers_[l], l == 0 ? inputs_.data() : hidden_[l - 1].data(), output_gradients_[l].data()));
  }
  const kernels::StepParams initial;  // step 0 of run 0 until initialize() and advance_step() set them
  MGPU_CUDA_CHECK(cudaMemcpyAsync(step_params_.data(), &initial, sizeof initial, cudaMemcpyHostToDevice, stream_));
  // The buffers the GEMMs write start as NaN: an element a step reads before any kernel wrote it turns the loss and
  // the math check into NaN instead of reading stale memory. compute-sanitizer's initcheck cannot stand in for this:
  // cuBLASLt's Hopper kernels write their products with tensor-memory stores it does not see, so it reports every
  // later read of a product only they ever wrote.
  fill_work_buffers_with_nan();  // ends with a synchronisation: `initial` ends with this scope
}

void CudaMlp::cast_gradients_to_bf16(std::size_t begin, std::size_t count, cudaStream_t stream) {
  MGPU_REQUIRE(gradients_bf16_.size() > 0, "no bf16 gradient buffer without --grad-dtype bf16");
  MGPU_REQUIRE(begin + count <= gradients_.size(), "gradient cast range past the buffer");
  kernels::cast_to_bf16(gradients_.data() + begin, gradients_bf16_.data() + begin, count, stream);
}

const void* CudaMlp::gemm_parameters(std::size_t offset) const {
  return bf16_ ? static_cast<const void*>(parameters_bf16_.data() + offset) : parameters_.data() + offset;
}

const void* CudaMlp::gemm_input(int layer) const {
  if (layer == 0) return bf16_ ? static_cast<const void*>(inputs_bf16_.data()) : inputs_.data();
  return bf16_ ? static_cast<const void*>(hidden_bf16_[layer - 1].data()) : hidden_[layer - 1].data();
}

void CudaMlp::refresh_gemm_parameters() {
  if (bf16_) kernels::cast_to_bf16(parameters_.data(), parameters_bf16_.data(), parameters_.size(), stream_);
  if (tf32x3_) kernels::split_weights(parameters_.data(), parameters_.size(), tf32x3_->weight_split(), stream_);
}

void CudaMlp::refresh_gemm_inputs() {
  if (bf16_) kernels::cast_to_bf16(inputs_.data(), inputs_bf16_.data(), inputs_.size(), stream_);
  if (tf32x3_) kernels::split_rows(inputs_.data(), batch_, tf32x3_->input_split(), stream_);
}

void CudaMlp::initialize(std::uint64_t seed, std::uint64_t run) {
  for (const DenseLayer& layer : layers_) {
    kernels::initialize_weights(parameters_.data() + layer.weight_offset, seed, run, layer.weight_offset,
                                layer.weight_count(), layer.fan_in, layer.fan_out, stream_);
    if (layer.hidden) {
      MGPU_CUDA_CHECK(
          cudaMemsetAsync(parameters_.data() + layer.bias_offset, 0, layer.bias_count() * sizeof(float), stream_));
    }
  }
  refresh_gemm_parameters();
  MGPU_CUDA_CHECK(cudaMemsetAsync(first_moment_.data(), 0, first_moment_.bytes(), stream_));
  MGPU_CUDA_CHECK(cudaMemsetAsync(second_moment_.data(), 0, second_moment_.bytes(), stream_));
  build_teacher(seed);
  kernels::begin_run(step_params_.data(), seed, run, stream_);
}

void CudaMlp::build_teacher(std::uint64_t seed) {
  if (have_teacher_ && teacher_seed_ == seed) return;
  kernels::teacher_weights(teacher_.data(), seed, model_.output_width(), model_.input_width(), stream_);
  have_teacher_ = true;
  teacher_seed_ = seed;
}

void CudaMlp::advance_step(int global_batch, std::uint64_t rank_offset, const AdamSettings& adam,
                           int accumulate_steps) {
  kernels::advance_step(step_params_.data(), static_cast<std::uint64_t>(global_batch), rank_offset, adam.beta1,
                        adam.beta2, accumulate_steps, stream_);
}

void CudaMlp::generate_batch() {
  MGPU_REQUIRE(have_teacher_, "generate_batch before initialize: no teacher network yet");
  kernels::generate_batch(inputs_.data(), targets_.data(), teacher_.data(), step_params_.data(), batch_,
                          model_.input_width(), model_.output_width(), stream_);
  refresh_gemm_inputs();  // part of data loading, outside the step like the batch itself
}

void CudaMlp::forward() {
  output_head_wrote_input_gradient_ = false;
  forward_layers(layers_.size());
}

void CudaMlp::forward_layers(std::size_t layer_count) {
  for (std::size_t l = 0; l < layer_count; ++l) forward_layer(l);
}

void CudaMlp::forward_layer(std::size_t l) {
  const DenseLayer& layer = layers_[l];
  float* z = layer.hidden ? hidden_[l].data() : output_.data();
  // Z^T[out, B] = W * X^T (fp32 result whatever the operands).
  // A hidden layer's bias + ReLU + dropout goes into the GEMM's epilogue where our kernel runs the product (fp32:
  // with bf16 the same pass must also write the next GEMM's bf16 input, which only the elementwise kernel does).
  kernels::SkinnyEpilogue epilogue;
  epilogue.kind = kernels::SkinnyEpilogue::Kind::bias_relu_dropout;
  epilogue.bias = parameters_.data() + layer.bias_offset;
  epilogue.params = step_params_.data();
  epilogue.layer = static_cast<std::uint32_t>(l);
  epilogue.drop_probability = drop_probability_;
  epilogue.keep_scale = kernels::dropout_keep_scale(drop_probability_);
  const bool fold = layer.hidden && !bf16_;
  // From layer 1 on, the kernel ahead is this pass's own, which writes no weight, so the weights are stable
  // (tuned_gemm.hpp): our GEMM may read them before that kernel is done. Layer 0's GEMM may follow anything the
  // caller enqueued, the optimizer included, so it reads them only after the wait.
  bool folded = false;
  if (tf32x3_) {
    tf32x3_->forward(gemm_, static_cast<int>(l), z, l > 0);
  } else {
    folded = gemm_.multiply(CUBLAS_OP_T, CUBLAS_OP_N, layer.fan_out, batch_, layer.fan_in,
                            gemm_parameters(layer.weight_offset), layer.fan_in, gemm_input(static_cast<int>(l)),
                            layer.fan_in, z, layer.fan_out, false, l > 0, fold ? &epilogue : nullptr);
  }
  if (!layer.hidden || folded) return;  // the output layer is linear and has no bias
  // The fp32 activation stays (backward's ReLU/dropout mask); with bf16 or tf32x3 the same pass writes the next GEMM's
  // input.
  kernels::bias_relu_dropout(z, parameters_.data() + layer.bias_offset, batch_, layer.fan_out,
                             static_cast<std::uint32_t>(l), drop_probability_, step_params_.data(), stream_,
                             bf16_ ? hidden_bf16_[l].data() : nullptr,
                             tf32x3_ ? tf32x3_->activation_split(static_cast<int>(l)) : kernels::SplitRows{});
}

void CudaMlp::loss_and_gradient(kernels::LossSlots losses) {
  // dL/dy is the output layer's dL/dZ (it is linear), where backward starts.
  kernels::mse_loss_and_gradient(
      output_.data(), targets_.data(), batch_ * model_.output_width(), output_gradients_.back().data(), losses,
      step_params_.data(), stream_, bf16_ ? output_gradients_bf16_.back().data() : nullptr,
      tf32x3_ ? tf32x3_->gradient_split(static_cast<int>(layers_.size()) - 1) : kernels::SplitRows{});
}

bool CudaMlp::output_head_fusable() const {
  const DenseLayer& output = layers_.back();
  return precision_ == Precision::fp32 && layers_.size() >= 2 &&
         kernels::output_head_supported(batch_, output.fan_in, output.fan_out);
}

void CudaMlp::forward_with_output_head(kernels::LossSlots losses) {
  MGPU_REQUIRE(output_head_fusable(), "the fused output head does not serve model " + model_.widths_string() +
                                          " at batch " + std::to_string(batch_) + " in " + setting_name(precision_));
  forward_layers(layers_.size() - 1);
  output_head(losses);
}

void CudaMlp::output_head(kernels::LossSlots losses) {
  const std::size_t last = layers_.size() - 1;
  const DenseLayer& layer = layers_[last];
  kernels::OutputHead head;
  head.hidden = hidden_[last - 1].data();
  head.weights = parameters_.data() + layer.weight_offset;
  head.targets = targets_.data();
  head.output = output_.data();
  head.output_gradient = output_gradients_[last].data();
  head.hidden_gradient = output_gradients_[last - 1].data();
  head.losses = losses;
  head.params = step_params_.data();
  head.batch = batch_;
  head.fan_in = layer.fan_in;
  head.fan_out = layer.fan_out;
  head.keep_scale = kernels::dropout_keep_scale(drop_probability_);
  kernels::output_head(head, stream_);
  output_head_wrote_input_gradient_ = true;
}

void CudaMlp::backward(const BucketPlan& plan, const std::function<void(int piece)>& after_piece, bool accumulate) {
  backward_pass(&plan, after_piece, accumulate);
}

void CudaMlp::backward_without_weight_gradients(const EarlyUpdate* early) { backward_pass(nullptr, {}, false, early); }

void CudaMlp::backward_pass(const BucketPlan* plan, const std::function<void(int piece)>& after_piece, bool accumulate,
                            const EarlyUpdate* early) {
  MGPU_REQUIRE(early == nullptr || plan == nullptr, "early updates belong to the fused optimizer's backward");
  layers_updated_early_ = 0;
  // Backward's GEMMs for the SMs a concurrent reduction leaves them; every other product for all of them.
  gemm_.set_sm_count_target(backward_sm_count_target_);
  struct AllSmsAfterwards {
    TunedGemm& gemm;
    ~AllSmsAfterwards() { gemm.set_sm_count_target(0); }
  } all_sms_afterwards{gemm_};
  // After forward_with_output_head the output layer's dL/dX is written, through the mask: the fused optimizer's
  // backward (no plan) starts below it. With a plan the bias gradient of the layer below is needed too: recomputed.
  const bool head_wrote_input_gradient = plan == nullptr && output_head_wrote_input_gradient_;
  output_head_wrote_input_gradient_ = false;
  // One weight-gradient GEMM per piece (weight_gradient_rows).
  const auto weight_gradient_piece = [&](std::size_t index) {
    const GradientPiece& piece = plan->pieces[index];
    weight_gradient_rows(piece.layer, piece.row_begin, piece.row_end - piece.row_begin, accumulate);
    if (after_piece) after_piece(static_cast<int>(index));
  };
  const bool deferred = plan != nullptr && plan->order == WeightGradientOrder::deferred;
  std::size_t next_piece = 0;
  for (int l = static_cast<int>(layers_.size()) - 1; l >= 0; --l) {
    // Layerwise: this layer's pieces now (the plan lists them in this order).
    for (; plan != nullptr && !deferred && next_piece < plan->pieces.size() && plan->pieces[next_piece].layer == l;
         ++next_piece) {
      weight_gradient_piece(next_piece);
    }
    if (l == 0) break;  // no gradient with respect to the data
    // Nothing to run where the output head has written this product, epilogue applied, already.
    const bool by_head = head_wrote_input_gradient && l == static_cast<int>(layers_.size()) - 1;
    if (!by_head) input_gradient(l, plan == nullptr, accumulate);
    if (early != nullptr) {
      // The GEMM above (or the output head) was the step's last reader of this layer's weights, and its dZ and input
      // are complete: its update can run beside the rest of backward, which reads neither its weights nor its bias.
      layer_released_.record(stream_);
      update_stream_.wait(layer_released_.get());
      update_layers(static_cast<std::size_t>(l), static_cast<std::size_t>(l) + 1, early->adam, early->gradient_scale,
                    early->accumulated, kernels::WeightGradientAdamGrid::one_tile_per_block, update_stream_.get());
      layers_updated_early_ = layers_.size() - static_cast<std::size_t>(l);
    }
  }
  // Deferred: every weight gradient after the chain, first layer first (no weight is read from here on).
  for (; deferred && next_piece < plan->pieces.size(); ++next_piece) weight_gradient_piece(next_piece);
  MGPU_REQUIRE(plan == nullptr || next_piece == plan->pieces.size(),
               "the bucket plan does not match the model's layers");
}

const void* CudaMlp::gradient_operand(int layer, std::size_t offset) const {
  // With bf16 the GEMMs read the bf16 copies of dL/dZ, written by the kernels that write the fp32 values.
  return bf16_ ? static_cast<const void*>(output_gradients_bf16_[layer].data() + offset)
               : output_gradients_[layer].data() + offset;
}

void CudaMlp::weight_gradient_rows(int l, int row_begin, int rows, bool accumulate) {
  // dW^T[in, rows] = X^T * dZ[:, rows]. The layer's bias gradient was written with its dZ (in the chain of input
  // gradients, one layer up), so the rows are complete after this GEMM.
  const DenseLayer& layer = layers_[l];
  float* weight_gradient = gradients_.data() + layer.weight_offset + static_cast<std::size_t>(row_begin) * layer.fan_in;
  if (tf32x3_) {
    tf32x3_->weight_gradient(gemm_, l, row_begin, rows, weight_gradient, accumulate);
    return;
  }
  gemm_.multiply(CUBLAS_OP_N, CUBLAS_OP_T, layer.fan_in, rows, batch_, gemm_input(l), layer.fan_in,
                 gradient_operand(l, static_cast<std::size_t>(row_begin)), layer.fan_out, weight_gradient, layer.fan_in,
                 accumulate);
}

void CudaMlp::weight_gradient(int layer) { weight_gradient_rows(layer, 0, layers_[layer].fan_out, false); }

void CudaMlp::input_gradient(int l, bool bias_in_optimizer, bool accumulate) {
  MGPU_REQUIRE(l >= 1 && l < static_cast<int>(layers_.size()), "input gradient of layer " + std::to_string(l) +
                                                                   ": the data has none, the model has " +
                                                                   std::to_string(layers_.size()) + " layers");
  const DenseLayer& layer = layers_[l];
  float* other = output_gradients_[l - 1].data();  // receives dL/dX, then the previous layer's dL/dZ
  // dX^T[in, B] = W^T * dZ^T, then through the previous layer's dropout and ReLU (its stored activation), with
  // that layer's bias gradient (the column sums of its dZ) in the same pass. With the fused optimizer the optimizer
  // kernel sums the bias gradients itself, which leaves a purely elementwise pass that our GEMM can apply as it
  // stores dX (fp32; bf16 also needs the bf16 copy the elementwise kernel writes).
  const DenseLayer& previous = layers_[l - 1];
  kernels::SkinnyEpilogue epilogue;
  epilogue.kind = kernels::SkinnyEpilogue::Kind::relu_dropout_backward;
  epilogue.activation = hidden_[l - 1].data();
  epilogue.keep_scale = kernels::dropout_keep_scale(drop_probability_);
  // Stable weights: the kernel ahead is backward's, the loss or the output head, none of which writes them.
  bool folded = false;
  if (tf32x3_) {
    tf32x3_->input_gradient(gemm_, l, other);
  } else {
    folded = gemm_.multiply(CUBLAS_OP_N, CUBLAS_OP_N, layer.fan_in, batch_, layer.fan_out,
                            gemm_parameters(layer.weight_offset), layer.fan_in, gradient_operand(l, 0), layer.fan_out,
                            other, layer.fan_in, false, true, bias_in_optimizer && !bf16_ ? &epilogue : nullptr);
  }
  if (folded) return;
  kernels::relu_dropout_backward_bias(
      other, hidden_[l - 1].data(), bias_in_optimizer ? nullptr : gradients_.data() + previous.bias_offset, batch_,
      layer.fan_in, drop_probability_, accumulate, stream_, bf16_ ? output_gradients_bf16_[l - 1].data() : nullptr,
      bias_gradient_workspace_.view(), tf32x3_ ? tf32x3_->gradient_split(l - 1) : kernels::SplitRows{});
}

void CudaMlp::adam(const AdamSettings& adam, std::size_t begin, std::size_t count, float gradient_scale) {
  this->adam(adam, begin, count, gradient_scale, stream_);
}

void CudaMlp::adam(const AdamSettings& adam, std::size_t begin, std::size_t count, float gradient_scale,
                   cudaStream_t stream) {
  MGPU_REQUIRE(begin <= parameters_.size(), "Adam range starts past the parameters");
  count = std::min(count, parameters_.size() - begin);
  kernels::adam_update(parameters_.data() + begin, gradients_.data() + begin, first_moment_.data() + begin,
                       second_moment_.data() + begin, count, adam_constants(adam, gradient_scale), step_params_.data(),
                       stream, bf16_ ? parameters_bf16_.data() + begin : nullptr,
                       gradients_bf16_.size() > 0 ? gradients_bf16_.data() + begin : nullptr,
                       tf32x3_ ? tf32x3_->weight_split(begin) : kernels::WeightSplit{});
}

void CudaMlp::adam_with_weight_gradients(const AdamSettings& adam, float gradient_scale, bool accumulated) {
  // fp32 only: with tf32 or bf16 the unfused weight gradient is a reduced-precision GEMM, which this is not.
  MGPU_REQUIRE(precision_ == Precision::fp32,
               std::string("the fused optimizer is fp32 only, not ") + setting_name(precision_));
  MGPU_REQUIRE(gradients_bf16_.size() == 0,
               "the fused optimizer reads fp32 gradients (one rank), not --grad-dtype bf16");
  // Nothing else runs now: the update may hold every SM.
  update_layers(0, layers_.size() - layers_updated_early_, adam, gradient_scale, accumulated,
                kernels::WeightGradientAdamGrid::resident, stream_);
  if (layers_updated_early_ > 0) {  // join: the step's parameters are all updated once the compute stream gets here
    updates_done_.record(update_stream_.get());
    MGPU_CUDA_CHECK(cudaStreamWaitEvent(stream_, updates_done_.get(), 0));
    layers_updated_early_ = 0;
  }
}

bool CudaMlp::early_updates_pay() const {
  std::size_t above_first = 0;
  for (std::size_t l = 1; l < layers_.size(); ++l) above_first += layers_[l].weight_count();
  return above_first >= kEarlyUpdateMinWeights;
}

void CudaMlp::update_layers(std::size_t first, std::size_t last, const AdamSettings& adam, float gradient_scale,
                            bool accumulated, kernels::WeightGradientAdamGrid grid, cudaStream_t stream) {
  if (first >= last) return;
  FusedUpdate update;
  update.layers = &fused_layers_;
  update.batch = batch_;
  update.parameters = parameters_.data();
  update.gradients = gradients_.data();
  update.first_moment = first_moment_.data();
  update.second_moment = second_moment_.data();
  update.parameter_count = parameters_.size();
  update.adam = adam_constants(adam, gradient_scale);
  update.params = step_params_.data();
  // Timed on the model's stream, after everything enqueued so far (the activations it reads included).
  if (fused_update_splits_ == 0) fused_update_splits_ = tuned_fused_update_splits(update, stream_);
  launch_fused_update(update, first, last, fused_update_splits_, accumulated, grid, stream);
}

void CudaMlp::set_fused_update_splits(int splits) {
  MGPU_REQUIRE(splits == 1 || splits == 2 || splits == 4 || splits == 8,
               "the fused optimizer splits the batch in 1, 2, 4 or 8 parts, not " + std::to_string(splits));
  fused_update_splits_ = splits;
}

void CudaMlp::upload_batch(const std::vector<float>& inputs, const std::vector<float>& targets) {
  copy_to_device(inputs_, inputs, stream_);
  copy_to_device(targets_, targets, stream_);
  refresh_gemm_inputs();
}

void CudaMlp::upload_parameters(const std::vector<float>& parameters) {
  copy_to_device(parameters_, parameters, stream_);
  refresh_gemm_parameters();
}

std::vector<float> CudaMlp::download_bf16_parameters() const {
  MGPU_REQUIRE(bf16_, "no bf16 parameter copy without --precision bf16");
  const std::vector<__nv_bfloat16> copy = copy_to_host(parameters_bf16_, stream_);
  std::vector<float> values(copy.size());
  for (std::size_t i = 0; i < copy.size(); ++i) values[i] = __bfloat162float(copy[i]);
  return values;
}

void CudaMlp::fill_work_buffers_with_nan() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DeviceBuffer<float>& hidden : hidden_) kernels::fill(hidden.data(), hidden.size(), nan, stream_);
  for (DeviceBuffer<float>& gradient : output_gradients_) kernels::fill(gradient.data(), gradient.size(), nan, stream_);
  kernels::fill(output_.data(), output_.size(), nan, stream_);
  kernels::fill(gradients_.data(), gradients_.size(), nan, stream_);
  if (bf16_) {  // the bf16 copies too (NaN stays NaN in bf16)
    for (std::size_t l = 0; l < hidden_.size(); ++l)
      kernels::cast_to_bf16(hidden_[l].data(), hidden_bf16_[l].data(), hidden_[l].size(), stream_);
    for (DeviceBuffer<__nv_bfloat16>& gradient : output_gradients_bf16_)  // all bits set: a NaN in bf16
      MGPU_CUDA_CHECK(cudaMemsetAsync(gradient.data(), 0xFF, gradient.bytes(), stream_));
  }
  if (tf32x3_) tf32x3_->fill_with_nan(stream_);
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace mgpu
