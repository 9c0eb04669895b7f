// Purpose: the plain reference step of the math check on one GPU (cuda_reference_step.hpp).
#include "train/cuda_reference_step.hpp"

#include "platform/cuda_resources.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gradient_buckets.hpp"

namespace mgpu {

std::vector<float> cuda_reference_parameters(const TrainingSettings& settings, int steps) {
  CudaStream stream;
  CudaMlp reference(settings.model, settings.global_batch, stream.get(), Precision::fp32, GradDtype::fp32,
                    GemmSelection::library_default);
  DeviceBuffer<float> losses(static_cast<std::size_t>(steps));
  const BucketPlan whole = whole_buffer_plan(settings.model);
  const float gradient_scale = 1.0f / static_cast<float>(settings.accumulate_steps);
  reference.initialize(settings.seed, 0);
  for (int step = 0; step < steps; ++step) {
    reference.advance_step(settings.global_batch, 0, settings.adam, settings.accumulate_steps);
    reference.generate_batch();
    reference.forward();
    reference.loss_and_gradient(loss_slots(losses));
    reference.backward(whole, {}, !settings.starts_accumulation(step));
    if (settings.ends_accumulation(step)) reference.adam(settings.adam, 0, reference.parameter_count(), gradient_scale);
  }
  return reference.download_parameters();  // synchronises the stream
}

}  // namespace mgpu
