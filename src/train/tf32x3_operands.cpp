// Purpose: Tf32x3Operands (tf32x3_operands.hpp): the split copies and the products over them.
#include "train/tf32x3_operands.hpp"

#include <limits>
#include <string>

#include "kernels/cuda_kernels.cuh"
#include "platform/error.hpp"

namespace mgpu {
namespace {

DeviceBuffer<float> split_rows_buffer(int batch, int width) {
  return DeviceBuffer<float>(2 * std::size_t(batch) * width);
}

}  // namespace

Tf32x3Operands::Tf32x3Operands(const MlpSpec& model, int batch)
    : layers_(model.layers()),
      batch_(batch),
      weights_(2 * model.parameter_count()),
      weight_layers_(layers_.size()),
      inputs_(split_rows_buffer(batch, model.input_width())) {
  std::vector<kernels::WeightSplitLayer> table;
  for (const DenseLayer& layer : layers_) {
    // The kernels index a layer's weights in 32 bits (tf32_split_store.cuh).
    MGPU_REQUIRE(layer.weight_count() < (std::size_t{1} << 32),
                 "tf32x3: a layer of " + std::to_string(layer.weight_count()) + " weights (at most 2^32 - 1)");
    table.push_back({layer.weight_offset, layer.weight_offset + layer.weight_count(), layer.fan_in});
    if (layer.hidden) activations_.push_back(split_rows_buffer(batch, layer.fan_out));
    gradients_.push_back(split_rows_buffer(batch, layer.fan_out));
  }
  // Synchronous: `table` ends with this scope.
  MGPU_CUDA_CHECK(cudaMemcpy(weight_layers_.data(), table.data(), weight_layers_.bytes(), cudaMemcpyHostToDevice));
}

kernels::SplitRows Tf32x3Operands::input_split() { return {inputs_.data(), layers_.front().fan_in, false}; }

kernels::SplitRows Tf32x3Operands::activation_split(int layer) {
  return {activations_.at(layer).data(), layers_.at(layer).fan_out, false};
}

kernels::SplitRows Tf32x3Operands::gradient_split(int layer) {
  return {gradients_.at(layer).data(), layers_.at(layer).fan_out, true};
}

kernels::WeightSplit Tf32x3Operands::weight_split(std::size_t first_index) {
  return {weights_.data(), weight_layers_.data(), static_cast<int>(weight_layers_.size()), first_index};
}

void Tf32x3Operands::fill_with_nan(cudaStream_t stream) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DeviceBuffer<float>& split : activations_) kernels::fill(split.data(), split.size(), nan, stream);
  for (DeviceBuffer<float>& split : gradients_) kernels::fill(split.data(), split.size(), nan, stream);
}

const float* Tf32x3Operands::layer_input(int layer) const {
  return layer == 0 ? inputs_.data() : activations_.at(layer - 1).data();
}

const float* Tf32x3Operands::weights(int layer) const { return weights_.data() + 2 * layers_.at(layer).weight_offset; }

void Tf32x3Operands::forward(TunedGemm& gemm, int layer, float* z, bool a_is_stable) {
  const int in = layers_.at(layer).fan_in, out = layers_.at(layer).fan_out;
  const float* w = weights(layer);      // rows [Ws | Wb]
  const float* x = layer_input(layer);  // rows [Xb | Xs]
  // Z^T = Ws Xb^T + Wb Xs^T over K = 2 in, then + Wb Xb^T.
  if (!drop_small_products)
    gemm.multiply(CUBLAS_OP_T, CUBLAS_OP_N, out, batch_, 2 * in, w, 2 * in, x, 2 * in, z, out, false, a_is_stable);
  gemm.multiply(CUBLAS_OP_T, CUBLAS_OP_N, out, batch_, in, w + in, 2 * in, x, 2 * in, z, out, !drop_small_products,
                a_is_stable);
}

void Tf32x3Operands::weight_gradient(TunedGemm& gemm, int layer, int row_begin, int rows, float* weight_gradient,
                                     bool accumulate) {
  const int in = layers_.at(layer).fan_in, out = layers_.at(layer).fan_out;
  const float* x = layer_input(layer);                        // rows [Xb | Xs]
  const float* dz = gradients_.at(layer).data() + row_begin;  // rows [dZs | dZb], from column row_begin
  // Read with leading dimensions in and out, x and dz are 2 B columns: row r's halves as columns 2r and 2r + 1, so
  // the product over K = 2 B pairs Xb with dZs and Xs with dZb. Then + Xb dZb over K = B.
  if (!drop_small_products)
    gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_T, in, rows, 2 * batch_, x, in, dz, out, weight_gradient, in, accumulate);
  gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_T, in, rows, batch_, x, 2 * in, dz + out, 2 * out, weight_gradient, in,
                accumulate || !drop_small_products);
}

void Tf32x3Operands::input_gradient(TunedGemm& gemm, int layer, float* input_gradient) {
  const int in = layers_.at(layer).fan_in, out = layers_.at(layer).fan_out;
  const float* w = weights(layer);                // as W^T[in, out]: Ws at w, Wb at w + in, leading dimension 2 in
  const float* dz = gradients_.at(layer).data();  // as dZ^T[out, B]: dZs at dz, dZb at dz + out, leading 2 out
  // The weights are stable: the kernel ahead is backward's, which writes none.
  if (!drop_small_products) {
    gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_N, in, batch_, out, w, 2 * in, dz + out, 2 * out, input_gradient, in, false,
                  true);
    gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_N, in, batch_, out, w + in, 2 * in, dz, 2 * out, input_gradient, in, true,
                  true);
  }
  gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_N, in, batch_, out, w + in, 2 * in, dz + out, 2 * out, input_gradient, in,
                !drop_small_products, true);
}

}  // namespace mgpu
