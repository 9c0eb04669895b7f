// Purpose: host launchers for the project's own CUDA kernels (synthetic batch, initialisation, bias + ReLU +
// dropout, its backward, MSE loss, Adam). Plain C++ signatures, so .cpp files compiled by g++ can call them; every
// launcher only enqueues work on `stream` and checks the launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mgpu::kernels {

// teacher[k * inputs + j] = synthetic::teacher_weight(seed, k, j), k < outputs.
void teacher_weights(float* teacher, std::uint64_t seed, int outputs, int inputs, cudaStream_t stream);

// Global samples first_sample .. first_sample + count - 1: x[count, inputs] = synthetic::feature, and
// targets[count, outputs] = synthetic::teacher_target(sum_j teacher[k, j] * x[i, j], inputs).
void generate_batch(float* x, float* targets, const float* teacher, std::uint64_t seed, std::uint64_t first_sample,
                    int count, int inputs, int outputs, cudaStream_t stream);

// weights[i] = synthetic::initial_weight(seed, run, first_index + i, fan_in, fan_out) for i < count, where
// first_index is the layer's offset in the flat parameter buffer (the key cpu::initialize_parameters uses).
void initialize_weights(float* weights, std::uint64_t seed, std::uint64_t run, std::size_t first_index,
                        std::size_t count, int fan_in, int fan_out, cudaStream_t stream);

// Which dropout mask one hidden layer uses in one step (synthetic::dropout_keep's key).
struct DropoutLayerKey {
  std::uint64_t seed = 0;
  std::uint64_t run = 0;
  std::uint64_t step = 0;
  std::uint32_t layer = 0;         // index of the dense layer the activation follows
  std::uint64_t first_sample = 0;  // global index of row 0
  float drop_probability = 0.0f;   // 0: no hashing, every unit kept with scale 1
};

// In place on z[batch, width] (row-major): z = keep ? max(z + bias[unit], 0) / (1 - p) : 0.
void bias_relu_dropout(float* z, const float* bias, int batch, int width, const DropoutLayerKey& key,
                       cudaStream_t stream);

// In place on grad[count]: grad *= (h > 0 ? 1 / (1 - p) : 0), h being the stored post-dropout activation.
void relu_dropout_backward(float* grad, const float* h, std::size_t count, float drop_probability, cudaStream_t stream);

// MSE over count values: grad_y = 2 (y - t) / count, *loss = mean (y - t)^2 (a device address). One block, fixed
// reduction order: the same inputs always give the same loss bits.
void mse_loss_and_gradient(const float* y, const float* targets, int count, float* grad_y, float* loss,
                           cudaStream_t stream);

// One Adam step over flat buffers, cpu::adam_update's formula; the bias corrections 1 - beta^t come from the host.
struct AdamStep {
  float learning_rate = 0.0f;
  float beta1 = 0.0f;
  float beta2 = 0.0f;
  float epsilon = 0.0f;
  float correction1 = 1.0f;  // 1 - beta1^t
  float correction2 = 1.0f;  // 1 - beta2^t
};
void adam_update(float* parameters, const float* gradients, float* first_moment, float* second_moment,
                 std::size_t count, const AdamStep& step, cudaStream_t stream);

// destination[i] = value for i < count (e.g. the ones vector for bias gradients).
void fill(float* destination, std::size_t count, float value, cudaStream_t stream);

}  // namespace mgpu::kernels
