// Purpose: CudaMlp: the forward/backward GEMMs through cuBLAS (fp32, column-major view of row-major data) and the
// rest of the step through our kernels, all on one stream.
#include "cuda_mlp.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "cuda_check.hpp"
#include "cuda_kernels.cuh"

namespace mgpu {

// Layout. Activations are row-major [batch, width] and weights row-major W[out, in]. cuBLAS is column-major, and the
// memory of a row-major [r, c] matrix is the column-major [c, r] matrix (its transpose) with leading dimension c.
// So every product is computed for the transposes, which cuBLAS then finds in our memory as they are
// (gemm(op_a, op_b, m, n, k); leading dimensions: X, dX, W and dW in; Y and dZ out):
//   forward  Y = X W^T   ->  Y^T[out, B]   = W[out, in] X^T[in, B]      W is stored as W^T:   gemm(T, N, out, B, in)
//   weights  dW = dZ^T X ->  dW^T[in, out] = X^T[in, B] dZ[B, out]      dZ is stored as dZ^T: gemm(N, T, in, out, B)
//   inputs   dX = dZ W   ->  dX^T[in, B]   = W^T[in, out] dZ^T[out, B]  both as stored:       gemm(N, N, in, B, out)
//   biases   db = dZ^T 1 ->  db[out]       = dZ^T[out, B] ones[B]       dZ as stored:         gemv(N, out, B)

CudaMlp::CudaMlp(const MlpSpec& model, int batch, cudaStream_t stream)
    : model_(model),
      layers_(model.layers()),
      batch_(batch),
      stream_(stream),
      cublas_(stream),
      parameters_(model.parameter_count()),
      gradients_(model.parameter_count()),
      first_moment_(model.parameter_count()),
      second_moment_(model.parameter_count()),
      inputs_(static_cast<std::size_t>(batch) * model.input_width()),
      targets_(static_cast<std::size_t>(batch) * model.output_width()),
      output_(static_cast<std::size_t>(batch) * model.output_width()),
      ones_(static_cast<std::size_t>(batch)),
      teacher_(static_cast<std::size_t>(model.output_width()) * model.input_width()) {
  MGPU_REQUIRE(batch > 0, "the local batch must hold at least one sample");
  for (const DenseLayer& layer : layers_) {
    if (layer.hidden) hidden_.emplace_back(static_cast<std::size_t>(batch) * layer.fan_out);
  }
  for (DeviceBuffer<float>& scratch : grad_scratch_) {
    scratch = DeviceBuffer<float>(static_cast<std::size_t>(batch) * model.max_width());
  }
  kernels::fill(ones_.data(), ones_.size(), 1.0f, stream_);
}

void CudaMlp::gemm(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const float* a, int lda,
                   const float* b, int ldb, float* c, int ldc) {
  const float one = 1.0f;
  const float zero = 0.0f;  // beta = 0: C is overwritten, never read (so NaN-poisoned outputs stay a valid test)
  // CUBLAS_COMPUTE_32F: fp32 inputs, products and accumulation. TF32 would need CUBLAS_COMPUTE_32F_FAST_TF32.
  MGPU_CUBLAS_CHECK(cublasGemmEx(cublas_.get(), op_a, op_b, m, n, k, &one, a, CUDA_R_32F, lda, b, CUDA_R_32F, ldb,
                                 &zero, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
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
  MGPU_CUDA_CHECK(cudaMemsetAsync(first_moment_.data(), 0, first_moment_.bytes(), stream_));
  MGPU_CUDA_CHECK(cudaMemsetAsync(second_moment_.data(), 0, second_moment_.bytes(), stream_));
}

void CudaMlp::generate_batch(std::uint64_t seed, std::uint64_t first_sample) {
  if (!have_teacher_ || teacher_seed_ != seed) {
    kernels::teacher_weights(teacher_.data(), seed, model_.output_width(), model_.input_width(), stream_);
    have_teacher_ = true;
    teacher_seed_ = seed;
  }
  kernels::generate_batch(inputs_.data(), targets_.data(), teacher_.data(), seed, first_sample, batch_,
                          model_.input_width(), model_.output_width(), stream_);
}

void CudaMlp::forward(const cpu::DropoutKey& dropout) {
  drop_probability_ = dropout.drop_probability;
  const float* input = inputs_.data();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const DenseLayer& layer = layers_[l];
    float* z = layer.hidden ? hidden_[l].data() : output_.data();
    // Z^T[out, B] = W * X^T.
    gemm(CUBLAS_OP_T, CUBLAS_OP_N, layer.fan_out, batch_, layer.fan_in, parameters_.data() + layer.weight_offset,
         layer.fan_in, input, layer.fan_in, z, layer.fan_out);
    if (!layer.hidden) break;  // the output layer is linear and has no bias
    kernels::DropoutLayerKey key;
    key.seed = dropout.seed;
    key.run = dropout.run;
    key.step = dropout.step;
    key.layer = static_cast<std::uint32_t>(l);
    key.first_sample = dropout.first_sample;
    key.drop_probability = dropout.drop_probability;
    kernels::bias_relu_dropout(z, parameters_.data() + layer.bias_offset, batch_, layer.fan_out, key, stream_);
    input = z;
  }
}

void CudaMlp::loss_and_gradient(float* loss) {
  // dL/dy goes to scratch 0, where backward starts.
  kernels::mse_loss_and_gradient(output_.data(), targets_.data(), batch_ * model_.output_width(),
                                 grad_scratch_[0].data(), loss, stream_);
}

void CudaMlp::backward() {
  float* grad = grad_scratch_[0].data();   // dL/dZ of the current layer, [batch, fan_out]
  float* other = grad_scratch_[1].data();  // receives dL/dX, [batch, fan_in]
  for (int l = static_cast<int>(layers_.size()) - 1; l >= 0; --l) {
    const DenseLayer& layer = layers_[l];
    const float* input = l == 0 ? inputs_.data() : hidden_[l - 1].data();
    // dW^T[in, out] = X^T * dZ.
    gemm(CUBLAS_OP_N, CUBLAS_OP_T, layer.fan_in, layer.fan_out, batch_, input, layer.fan_in, grad, layer.fan_out,
         gradients_.data() + layer.weight_offset, layer.fan_in);
    if (layer.hidden) {
      const float one = 1.0f;
      const float zero = 0.0f;
      // db[out] = dZ^T[out, B] * ones[B]: the column sums of dZ.
      MGPU_CUBLAS_CHECK(cublasSgemv(cublas_.get(), CUBLAS_OP_N, layer.fan_out, batch_, &one, grad, layer.fan_out,
                                    ones_.data(), 1, &zero, gradients_.data() + layer.bias_offset, 1));
    }
    if (l == 0) break;  // no gradient with respect to the data
    // dX^T[in, B] = W^T * dZ^T, then through the previous layer's dropout and ReLU (its stored activation).
    gemm(CUBLAS_OP_N, CUBLAS_OP_N, layer.fan_in, batch_, layer.fan_out, parameters_.data() + layer.weight_offset,
         layer.fan_in, grad, layer.fan_out, other, layer.fan_in);
    kernels::relu_dropout_backward(other, hidden_[l - 1].data(), static_cast<std::size_t>(batch_) * layer.fan_in,
                                   drop_probability_, stream_);
    std::swap(grad, other);
  }
}

void CudaMlp::adam(const AdamSettings& adam, int step_number) {
  kernels::AdamStep step;
  step.learning_rate = adam.learning_rate;
  step.beta1 = adam.beta1;
  step.beta2 = adam.beta2;
  step.epsilon = adam.epsilon;
  step.correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(adam.beta1), step_number));
  step.correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(adam.beta2), step_number));
  kernels::adam_update(parameters_.data(), gradients_.data(), first_moment_.data(), second_moment_.data(),
                       parameters_.size(), step, stream_);
}

void CudaMlp::upload_batch(const std::vector<float>& inputs, const std::vector<float>& targets) {
  copy_to_device(inputs_, inputs, stream_);
  copy_to_device(targets_, targets, stream_);
}

void CudaMlp::fill_work_buffers_with_nan() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DeviceBuffer<float>& hidden : hidden_) kernels::fill(hidden.data(), hidden.size(), nan, stream_);
  for (DeviceBuffer<float>& scratch : grad_scratch_) kernels::fill(scratch.data(), scratch.size(), nan, stream_);
  kernels::fill(output_.data(), output_.size(), nan, stream_);
  kernels::fill(gradients_.data(), gradients_.size(), nan, stream_);
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace mgpu
