// Purpose: the plain reference step of the math check on one GPU (cuda_reference_step.hpp).
#include "train/cuda_reference_step.hpp"

#include "platform/cuda_resources.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gradient_buckets.hpp"

namespace mgpu {

CudaReferenceRun cuda_reference_run(const TrainingSettings& settings, int steps) {
  CudaStream stream;
  // The configuration's precision: the check is of how the step computes, not of how much bf16 or tf32 rounds (the
  // kernel tests hold every precision to float64). tf32x3 claims fp32's accuracy, so it is held to the fp32 step.
  const Precision precision = settings.precision == Precision::tf32x3 ? Precision::fp32 : settings.precision;
  CudaMlp reference(settings.model, settings.global_batch, stream.get(), precision, GradDtype::fp32,
                    GemmSelection::library_default);
  DeviceBuffer<float> losses(static_cast<std::size_t>(steps));
  const BucketPlan whole = whole_buffer_plan(settings.model);
  const float gradient_scale = 1.0f / static_cast<float>(settings.accumulate_steps);
  reference.initialize(settings.seed, 0);
  CudaReferenceRun run;
  run.initial = reference.download_parameters();
  for (int step = 0; step < steps; ++step) {
    reference.advance_step(settings.global_batch, 0, settings.adam, settings.accumulate_steps);
    reference.generate_batch();
    reference.forward();
    reference.loss_and_gradient(loss_slots(losses));
    reference.backward(whole, {}, !settings.starts_accumulation(step));
    if (settings.ends_accumulation(step)) reference.adam(settings.adam, 0, reference.parameter_count(), gradient_scale);
  }
  run.trained = reference.download_parameters();  // synchronises the stream
  return run;
}

}  // namespace mgpu
