// Purpose: Adam's update of one parameter, the one formula every GPU optimizer kernel applies (the flat-buffer Adam
// of cuda_kernels.cu and the fused weight-gradient + Adam of weight_gradient_adam.cu), so both give the same bits for
// the same gradient; cpu::adam_update is the same formula in float64.
#pragma once

#include "kernels/cuda_kernels.cuh"

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
//
// The square root and the division are the hardware's approximate ones (PTX sqrt.approx.f32, div.approx.f32), not
// the correctly rounded sequences of sqrtf and '/': those cost about 20 instructions per weight with a branch each,
// in a kernel whose issue slots set its time. Only the step lr * m_hat / (...) changes, by a few units in its last
// place (a relative 1e-7 or so), and the step is ~1e-3 of the weight it is subtracted from, so the new weight is the
// same float or one unit away; m and v are unchanged. test_cuda_mlp's Adam tests hold the update (after - before) to
// the float64 reference within 1e-4. On H200 it took large's layer-0 fused update from 32.7 to 31.1 us (Nsight
// Compute).
__device__ __forceinline__ void adam_element(float& p, float& m, float& v, float g, const AdamStep& step) {
  m = step.beta1 * m + (1.0f - step.beta1) * g;
  v = step.beta2 * v + (1.0f - step.beta2) * g * g;
  float root;  // v_hat >= 0, so the root is finite and the denominator at least epsilon
  asm("sqrt.approx.f32 %0, %1;" : "=f"(root) : "f"(v * step.inverse_correction2));
  p -= __fdividef(step.step_size * m, root + step.epsilon);
}

}  // namespace mgpu::kernels
