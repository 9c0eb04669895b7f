// Purpose: --precision tf32x3 for CudaMlp: the split copies of every GEMM operand (model/tf32_split.hpp) and each of
// the step's products as TF32 tensor-core GEMMs of them, the small terms first and then big x big added (beta 1), in
// fp32: C = a_big b_small + a_small b_big + a_big b_big, small x small dropped.
//
// Layout. Each split copy keeps a row-major matrix's rows, each doubled: row r = [first half | second half] of 2 w
// floats. That makes the two small terms one GEMM over a concatenated K wherever K runs along the rows (the layer's
// input width: forward) or across them (the batch: weight gradients), since a row-major [rows, 2 w] matrix read with
// leading dimension w is the rows of both halves in turn. The halves must then pair big with small, so the orders
// differ: a layer's input (the batch's x, a hidden activation) is [big | small], dL/dZ and the weights [small | big].
//   forward  Z^T = W X^T:   W' X'^T over K = 2 in (Ws Xb + Wb Xs), then Wb Xb over K = in
//   weights  dW^T = X^T dZ: X' dZ' over K = 2 B read with leading dimensions in and out (Xb dZs + Xs dZb), then
//                           Xb dZb over K = B
//   inputs   dX^T = W^T dZ^T: K runs across W's rows but along dZ's: three GEMMs (Ws dZb, Wb dZs, Wb dZb)
// The kernels that write each fp32 operand write its split in the same pass (the activation epilogue, the loss,
// the ReLU backward, Adam: cuda_kernels.cuh); the batch's inputs are split with the batch, as data loading.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kernels/tf32_split.cuh"
#include "model/mlp_spec.hpp"
#include "platform/cuda_resources.hpp"
#include "train/gemm/tuned_gemm.hpp"

namespace mgpu {

class Tf32x3Operands {
 public:
  // The split copies of `model`'s operands at `batch` samples, allocated here.
  Tf32x3Operands(const MlpSpec& model, int batch);

  // Where the producers write: the batch's inputs, hidden layer `layer`'s activation (the input of layer + 1), dL/dZ of
  // `layer`, and the weights among the flat parameters from index first_index on.
  kernels::SplitRows input_split();
  kernels::SplitRows activation_split(int layer);
  kernels::SplitRows gradient_split(int layer);
  kernels::WeightSplit weight_split(std::size_t first_index = 0);
  // Every split copy but the weights' filled with NaN (CudaMlp::fill_work_buffers_with_nan).
  void fill_with_nan(cudaStream_t stream);

  // The step's products on `gemm` (a TunedGemm of CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 operands), as CudaMlp states
  // them (cuda_mlp.cpp): layer `layer`'s forward Z^T[out, B] into z; rows [row_begin, row_begin + rows) of its weight
  // gradient dW^T[in, rows] into weight_gradient (with `accumulate`, added); its input gradient dX^T[in, B] into
  // input_gradient. a_is_stable as TunedGemm::multiply.
  void forward(TunedGemm& gemm, int layer, float* z, bool a_is_stable);
  void weight_gradient(TunedGemm& gemm, int layer, int row_begin, int rows, float* weight_gradient, bool accumulate);
  void input_gradient(TunedGemm& gemm, int layer, float* input_gradient);

  // Tests only: every product without its small terms (big x big alone, plain TF32 of the big parts), the step a
  // tf32x3 that lost them would compute.
  bool drop_small_products = false;

 private:
  const float* layer_input(int layer) const;  // the split of layer `layer`'s input: x, or hidden layer - 1
  const float* weights(int layer) const;      // the split of layer `layer`'s W

  std::vector<DenseLayer> layers_;
  int batch_;
  DeviceBuffer<float> weights_;  // twice the flat parameter buffer: layer k's W at 2 weight_offset, biases unused
  DeviceBuffer<kernels::WeightSplitLayer> weight_layers_;
  DeviceBuffer<float> inputs_;                    // [batch, 2 inputs], [big | small]
  std::vector<DeviceBuffer<float>> activations_;  // [batch, 2 fan_out] per hidden layer, [big | small]
  std::vector<DeviceBuffer<float>> gradients_;    // [batch, 2 fan_out] per layer, [small | big]
};

}  // namespace mgpu
