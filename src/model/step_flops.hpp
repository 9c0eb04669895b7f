// Purpose: the arithmetic of one training step of an MLP: the GEMMs the step runs and their FLOPs, the one count
// every TFLOP/s figure and the floor's FLOP term divide by.
#pragma once

#include <cstdint>
#include <vector>

#include "model/mlp_spec.hpp"

namespace mgpu {

// One GEMM of the step on a batch of B samples, in the column-major view the CUDA step calls it with
// (src/train/cuda_mlp.cpp): forward gemm(T, N, out, B, in), weight gradient gemm(N, T, in, out, B), input gradient
// gemm(N, N, in, B, out).
struct StepGemm {
  enum class Kind { forward, weight_grad, input_grad };
  int layer = 0;
  Kind kind = Kind::forward;
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

// "forward", "weight_grad" or "input_grad": the probe's labels of the step's units.
const char* step_gemm_kind_name(StepGemm::Kind kind);

// The step's GEMMs in layer order: every layer's forward and weight gradient, and the input gradient of every layer
// but the first. No step computes the input's gradient: the data is not trained (docs/prediction.md's backward term).
std::vector<StepGemm> step_gemms(const MlpSpec& model, std::int64_t batch);

// FLOPs of one step on `batch` samples: the sum of step_gemms, 2 B (3 W - W_0) for W dense weights of which W_0 are
// the first layer's. Bias, activation, loss and Adam arithmetic are memory-bound and not counted.
double step_flops(const MlpSpec& model, std::int64_t batch);

}  // namespace mgpu
