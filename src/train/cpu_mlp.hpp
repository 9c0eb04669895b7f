// Purpose: the MLP's forward, MSE loss, backward and Adam on the CPU, templated on the scalar type: float for the
// CPU fallback trainer, double for the float64 reference the tests hold the GPU path to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/cpu_blas.hpp"
#include "model/mlp_spec.hpp"
#include "model/synthetic_data.hpp"
#include "train/trainer.hpp"

namespace mgpu::cpu {

// Which dropout mask a step uses: docs/measurement.md keys it by global sample index, so it is the same on any rank
// count.
struct DropoutKey {
  std::uint64_t seed = 0;
  std::uint64_t run = 0;
  std::uint64_t step = 0;
  std::uint64_t first_sample = 0;  // global index of this rank's first sample in the step
  float drop_probability = 0.0f;   // 0 turns dropout off
};

// Activations kept for backward: hidden[l] is [batch, width of layer l's output] after bias, ReLU and dropout.
template <typename Real>
struct MlpActivations {
  std::vector<std::vector<Real>> hidden;
  std::vector<Real> output;  // [batch, output width]
};

// Fills x [count, inputs] and targets [count, outputs] with global samples first_sample .. first_sample+count-1.
template <typename Real>
void generate_samples(std::uint64_t seed, std::uint64_t first_sample, int count, int inputs, int outputs, Real* x,
                      Real* targets) {
  std::vector<float> teacher(static_cast<std::size_t>(outputs) * inputs);
  for (int k = 0; k < outputs; ++k)
    for (int j = 0; j < inputs; ++j) teacher[std::size_t(k) * inputs + j] = synthetic::teacher_weight(seed, k, j);
  std::vector<float> row(inputs);
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < inputs; ++j) row[j] = synthetic::feature(seed, first_sample + i, j);
    for (int j = 0; j < inputs; ++j) x[std::size_t(i) * inputs + j] = row[j];
    for (int k = 0; k < outputs; ++k) {
      float projection = 0.0f;
      for (int j = 0; j < inputs; ++j) projection += teacher[std::size_t(k) * inputs + j] * row[j];
      targets[std::size_t(i) * outputs + k] = synthetic::teacher_target(projection, inputs);
    }
  }
}

// Glorot-uniform weights, zero biases, keyed by (seed, run): the same values the GPU initialiser computes.
template <typename Real>
void initialize_parameters(const MlpSpec& model, std::uint64_t seed, std::uint64_t run, Real* parameters) {
  for (const DenseLayer& layer : model.layers()) {
    for (std::size_t i = 0; i < layer.weight_count(); ++i) {
      const std::size_t index = layer.weight_offset + i;
      parameters[index] = synthetic::initial_weight(seed, run, index, layer.fan_in, layer.fan_out);
    }
    for (std::size_t i = 0; i < layer.bias_count(); ++i) parameters[layer.bias_offset + i] = Real(0);
  }
}

template <typename Real>
void mlp_forward(const MlpSpec& model, const Real* parameters, const Real* x, int batch, const DropoutKey& dropout,
                 MlpActivations<Real>& activations) {
  const std::vector<DenseLayer> layers = model.layers();
  activations.hidden.resize(layers.size() - 1);
  const Real* input = x;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const DenseLayer& layer = layers[l];
    std::vector<Real>& out = layer.hidden ? activations.hidden[l] : activations.output;
    out.assign(std::size_t(batch) * layer.fan_out, Real(0));
    // Z[B, out] = X[B, in] * W^T, with W stored [out, in].
    gemm(false, true, batch, layer.fan_out, layer.fan_in, Real(1), input, layer.fan_in,
         parameters + layer.weight_offset, layer.fan_in, Real(0), out.data(), layer.fan_out);
    if (layer.hidden) {
      const Real keep_scale = Real(1) / (Real(1) - Real(dropout.drop_probability));
      const Real* bias = parameters + layer.bias_offset;
      for (int i = 0; i < batch; ++i) {
        for (int u = 0; u < layer.fan_out; ++u) {
          Real& z = out[std::size_t(i) * layer.fan_out + u];
          const Real relu = std::max(z + bias[u], Real(0));
          const bool keep =
              dropout.drop_probability == 0.0f ||
              synthetic::dropout_keep(dropout.seed, dropout.run, dropout.step, std::uint32_t(l),
                                      dropout.first_sample + i, std::uint32_t(u), dropout.drop_probability);
          z = keep ? relu * keep_scale : Real(0);
        }
      }
      input = out.data();
    }
  }
}

// Mean squared error over count = batch * outputs values; writes dL/dy. Returns the loss.
template <typename Real>
Real mse_loss_and_gradient(const Real* y, const Real* targets, std::size_t count, Real* grad_y) {
  Real loss = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Real diff = y[i] - targets[i];
    loss += diff * diff;
    grad_y[i] = Real(2) * diff / Real(count);
  }
  return loss / Real(count);
}

// Gradients of the loss with respect to every parameter, written into the flat buffer `gradients`.
// A hidden unit passes gradient only where its stored activation is positive: h > 0 exactly when the pre-activation
// was positive and dropout kept the unit, so the activations alone encode both masks.
template <typename Real>
void mlp_backward(const MlpSpec& model, const Real* parameters, const Real* x, int batch,
                  const MlpActivations<Real>& activations, const Real* grad_output, float drop_probability,
                  Real* gradients) {
  const std::vector<DenseLayer> layers = model.layers();
  const Real keep_scale = Real(1) / (Real(1) - Real(drop_probability));
  std::vector<Real> grad(grad_output, grad_output + std::size_t(batch) * model.output_width());
  std::vector<Real> grad_input;
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const DenseLayer& layer = layers[l];
    const Real* input = l == 0 ? x : activations.hidden[l - 1].data();
    // dW[out, in] = dZ^T * X.
    gemm(true, false, layer.fan_out, layer.fan_in, batch, Real(1), grad.data(), layer.fan_out, input, layer.fan_in,
         Real(0), gradients + layer.weight_offset, layer.fan_in);
    if (layer.hidden) {
      Real* bias_grad = gradients + layer.bias_offset;
      for (int u = 0; u < layer.fan_out; ++u) bias_grad[u] = 0;
      for (int i = 0; i < batch; ++i)
        for (int u = 0; u < layer.fan_out; ++u) bias_grad[u] += grad[std::size_t(i) * layer.fan_out + u];
    }
    if (l == 0) break;
    // dX[B, in] = dZ * W, then through the previous layer's dropout and ReLU.
    grad_input.assign(std::size_t(batch) * layer.fan_in, Real(0));
    gemm(false, false, batch, layer.fan_in, layer.fan_out, Real(1), grad.data(), layer.fan_out,
         parameters + layer.weight_offset, layer.fan_in, Real(0), grad_input.data(), layer.fan_in);
    const std::vector<Real>& previous = activations.hidden[l - 1];
    for (std::size_t i = 0; i < grad_input.size(); ++i)
      grad_input[i] = previous[i] > Real(0) ? grad_input[i] * keep_scale : Real(0);
    grad.swap(grad_input);
  }
}

// One Adam step (step_number counts from 1) over the flat buffers.
template <typename Real>
void adam_update(const AdamSettings& adam, int step_number, std::size_t count, Real* parameters, const Real* gradients,
                 Real* first_moment, Real* second_moment) {
  const Real correction1 = Real(1) - std::pow(Real(adam.beta1), Real(step_number));
  const Real correction2 = Real(1) - std::pow(Real(adam.beta2), Real(step_number));
  for (std::size_t i = 0; i < count; ++i) {
    const Real g = gradients[i];
    first_moment[i] = Real(adam.beta1) * first_moment[i] + (Real(1) - Real(adam.beta1)) * g;
    second_moment[i] = Real(adam.beta2) * second_moment[i] + (Real(1) - Real(adam.beta2)) * g * g;
    const Real m_hat = first_moment[i] / correction1;
    const Real v_hat = second_moment[i] / correction2;
    parameters[i] -= Real(adam.learning_rate) * m_hat / (std::sqrt(v_hat) + Real(adam.epsilon));
  }
}

}  // namespace mgpu::cpu
