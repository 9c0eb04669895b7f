// Purpose: the MLP's math on one GPU (the function cpu_mlp.hpp defines): device buffers, synthetic batch, forward,
// MSE loss, backward and Adam, each enqueued on one stream with no host synchronisation. Used by CudaTrainer and by
// the tests that hold the GPU to the float64 reference.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cpu_mlp.hpp"
#include "cuda_resources.hpp"
#include "mlp_spec.hpp"
#include "trainer.hpp"

namespace mgpu {

class CudaMlp {
 public:
  // Allocates every buffer for `batch` samples on the current device; all work goes to `stream` (not owned, must
  // outlive this object). Nothing is allocated after construction.
  CudaMlp(const MlpSpec& model, int batch, cudaStream_t stream);
  CudaMlp(const CudaMlp&) = delete;
  CudaMlp& operator=(const CudaMlp&) = delete;

  const MlpSpec& model() const noexcept { return model_; }
  int batch() const noexcept { return batch_; }
  std::size_t parameter_count() const noexcept { return parameters_.size(); }

  // --- The training step, in order. Each call only enqueues work on the stream. ---
  // Glorot-uniform weights and zero biases from (seed, run), as cpu::initialize_parameters; zero Adam moments.
  void initialize(std::uint64_t seed, std::uint64_t run);
  // Inputs and targets of global samples first_sample .. first_sample + batch - 1 (the teacher for `seed` is built
  // once, at the first call with that seed).
  void generate_batch(std::uint64_t seed, std::uint64_t first_sample);
  // Activations and output for the current inputs; `dropout.first_sample` must be the batch's first global sample.
  void forward(const cpu::DropoutKey& dropout);
  // MSE of the output against the targets into *loss (a device address), and dL/dy for backward.
  void loss_and_gradient(float* loss);
  // Every parameter's gradient into gradients() (all of it is overwritten), through the last forward's dropout.
  void backward();
  // One Adam step (step_number counts from 1) from gradients() into the parameters.
  void adam(const AdamSettings& adam, int step_number);

  // The flat gradient buffer (layout of MlpSpec::layers()): what the data-parallel step all-reduces in place.
  float* gradients() noexcept { return gradients_.data(); }

  // --- Synchronous copies and fills for tests and results; never inside a timed run. ---
  std::vector<float> download_parameters() const { return copy_to_host(parameters_, stream_); }
  std::vector<float> download_gradients() const { return copy_to_host(gradients_, stream_); }
  std::vector<float> download_inputs() const { return copy_to_host(inputs_, stream_); }
  std::vector<float> download_targets() const { return copy_to_host(targets_, stream_); }
  std::vector<float> download_output() const { return copy_to_host(output_, stream_); }
  void upload_parameters(const std::vector<float>& parameters) { copy_to_device(parameters_, parameters, stream_); }
  void upload_gradients(const std::vector<float>& gradients) { copy_to_device(gradients_, gradients, stream_); }
  void upload_batch(const std::vector<float>& inputs, const std::vector<float>& targets);
  // Fills activations, output, gradients and scratch with NaN, so that any element a step fails to write shows.
  void fill_work_buffers_with_nan();

 private:
  void gemm(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const float* a, int lda,
            const float* b, int ldb, float* c, int ldc);

  MlpSpec model_;
  std::vector<DenseLayer> layers_;
  int batch_;
  cudaStream_t stream_;
  CublasHandle cublas_;

  DeviceBuffer<float> parameters_;           // [W0, b0, W1, b1, ..., W_last], MlpSpec::layers() offsets
  DeviceBuffer<float> gradients_;            // same layout: one contiguous buffer, so one all-reduce covers all
  DeviceBuffer<float> first_moment_;         // Adam m
  DeviceBuffer<float> second_moment_;        // Adam v
  DeviceBuffer<float> inputs_;               // x [batch, inputs]
  DeviceBuffer<float> targets_;              // [batch, outputs]
  std::vector<DeviceBuffer<float>> hidden_;  // hidden_[l]: [batch, fan_out of layer l] after bias, ReLU, dropout
  DeviceBuffer<float> output_;               // [batch, outputs]
  DeviceBuffer<float> grad_scratch_[2];      // ping-pong dL/d(activation), [batch, max width] each
  DeviceBuffer<float> ones_;                 // [batch] of 1: bias gradient = dZ^T * ones
  DeviceBuffer<float> teacher_;              // [outputs, inputs]
  bool have_teacher_ = false;
  std::uint64_t teacher_seed_ = 0;
  float drop_probability_ = 0.0f;  // of the last forward, which backward must match
};

}  // namespace mgpu
