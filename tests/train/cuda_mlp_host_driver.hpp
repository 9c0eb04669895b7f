// Purpose: the tests' host-driven use of CudaMlp: the step's values (dropout key, first sample, Adam's corrections) set
// from the host with a synchronous upload before each call, where the trainer has kernels advance them on the GPU.
// One driver per model, made right after it: the driver's host copy of the values is what every call uploads.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "train/cuda_mlp.hpp"

namespace mgpu {

class CudaMlpHostDriver {
 public:
  explicit CudaMlpHostDriver(CudaMlp& mlp) : mlp_(mlp) {}

  // The batch of global samples [first_sample, first_sample + batch) of the teacher for `seed`.
  void generate_batch(std::uint64_t seed, std::uint64_t first_sample) {
    mlp_.build_teacher(seed);
    values_.seed = seed;
    values_.first_sample = first_sample;
    upload();
    mlp_.generate_batch();
  }
  // Forward with this dropout key and drop probability (instead of the model's).
  void forward(const cpu::DropoutKey& dropout) {
    set_dropout_key(dropout);
    mlp_.forward();
  }
  void forward_with_output_head(const cpu::DropoutKey& dropout, kernels::LossSlots losses) {
    set_dropout_key(dropout);
    mlp_.forward_with_output_head(losses);
  }
  // Adam's update number `step_number` (1, 2, ...) over every parameter.
  void adam_at_step(const AdamSettings& adam, int step_number) {
    set_adam_corrections(adam, step_number);
    mlp_.adam(adam);
  }
  void adam_with_weight_gradients_at_step(const AdamSettings& adam, int step_number, float gradient_scale,
                                          bool accumulated) {
    set_adam_corrections(adam, step_number);
    mlp_.adam_with_weight_gradients(adam, gradient_scale, accumulated);
  }
  // Adam's corrections of update `step_number` into the step's values (what the calls above do first).
  void set_adam_corrections(const AdamSettings& adam, int step_number) {
    values_.correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(adam.beta1), step_number));
    values_.correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(adam.beta2), step_number));
    upload();
  }
  void upload_moments(const std::vector<float>& first, const std::vector<float>& second) {
    copy_to_device(mlp_.first_moment_, first, mlp_.stream_);
    copy_to_device(mlp_.second_moment_, second, mlp_.stream_);
  }
  // --precision tf32x3: every product without its small terms from now on (Tf32x3Operands::drop_small_products).
  void drop_small_products() {
    MGPU_REQUIRE(mlp_.tf32x3_ != nullptr, "drop_small_products: the model is not tf32x3");
    mlp_.tf32x3_->drop_small_products = true;
  }

 private:
  void set_dropout_key(const cpu::DropoutKey& dropout) {
    values_.seed = dropout.seed;
    values_.run = dropout.run;
    values_.step = dropout.step;
    values_.first_sample = dropout.first_sample;
    upload();
    mlp_.drop_probability_ = dropout.drop_probability;
  }
  // After the work already on the model's stream, which may still read the values being replaced.
  void upload() {
    MGPU_CUDA_CHECK(
        cudaMemcpyAsync(mlp_.step_params(), &values_, sizeof values_, cudaMemcpyHostToDevice, mlp_.stream_));
    MGPU_CUDA_CHECK(cudaStreamSynchronize(mlp_.stream_));  // values_ may change as soon as this returns
  }

  CudaMlp& mlp_;
  kernels::StepParams values_;
};

}  // namespace mgpu
