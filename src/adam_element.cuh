// Purpose: Adam's update of one parameter, the one formula every GPU optimizer kernel applies (the flat-buffer Adam
// of cuda_kernels.cu and the fused weight-gradient + Adam of weight_gradient_adam.cu), so both give the same bits for
// the same gradient; cpu::adam_update is the same formula in float64.
#pragma once

#include "cuda_kernels.cuh"

namespace mgpu::kernels {

// The step's constants of Adam's formula, formed once per thread: the per-element work is then one division and one
// square root (these kernels are bound by memory, and the arithmetic of a division per correction would show).
struct AdamStep {
  float beta1, beta2, epsilon;
  float step_size;            // learning rate / (1 - beta1^t)
  float inverse_correction2;  // 1 / (1 - beta2^t)
};

__device__ __forceinline__ AdamStep adam_step(const AdamConstants& adam, float correction1, float correction2) {
  return {adam.beta1, adam.beta2, adam.epsilon, adam.learning_rate / correction1, 1.0f / correction2};
}

// p, m, v updated in place for gradient g (already scaled): p -= lr * m_hat / (sqrt(v_hat) + epsilon), with
// m_hat = m / (1 - beta1^t) and v_hat = v / (1 - beta2^t).
__device__ __forceinline__ void adam_element(float& p, float& m, float& v, float g, const AdamStep& step) {
  m = step.beta1 * m + (1.0f - step.beta1) * g;
  v = step.beta2 * v + (1.0f - step.beta2) * g * g;
  p -= step.step_size * m / (sqrtf(v * step.inverse_correction2) + step.epsilon);
}

}  // namespace mgpu::kernels
