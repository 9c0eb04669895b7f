// Purpose: a float64 reference of a whole training run (batches, forward, backward, gradient accumulation over K
// steps, Adam) from the cpu_mlp.hpp templates: the function every trainer (CPU fallback, CUDA) is held to, by the
// tests and by the math check of every measured configuration (math_check.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "train/cpu_mlp.hpp"
#include "train/trainer.hpp"

namespace mgpu::float64_reference {

// The parameters after settings.total_steps() steps of run `run_index` on one rank, in float64: step s trains global
// samples [s*B, (s+1)*B); the gradients of K consecutive steps are averaged and applied by one Adam step at steps
// K, 2K, ... (settings.accumulate_steps = K; K = 1 is plain training). `after_forward` (optional) sees each step's
// parameters, inputs and activations.
using ForwardObserver = std::function<void(const std::vector<double>& parameters, const std::vector<double>& x,
                                           const cpu::MlpActivations<double>& activations)>;
inline std::vector<double> training_run(const TrainingSettings& settings, int run_index,
                                        const ForwardObserver& after_forward = {}) {
  const MlpSpec& model = settings.model;
  const int batch = settings.global_batch;
  const int k = settings.accumulate_steps;
  const std::size_t count = model.parameter_count();
  std::vector<double> parameters(count), accumulated(count), gradients(count), m(count, 0.0), v(count, 0.0);
  cpu::initialize_parameters(model, settings.seed, run_index, parameters.data());
  std::vector<double> x(std::size_t(batch) * model.input_width()), y(std::size_t(batch) * model.output_width());
  std::vector<double> grad_y(y.size());
  cpu::MlpActivations<double> activations;
  for (int step = 0; step < settings.total_steps(); ++step) {
    const std::uint64_t first = std::uint64_t(step) * batch;
    cpu::generate_samples(settings.seed, first, batch, model.input_width(), model.output_width(), x.data(), y.data());
    const cpu::DropoutKey dropout{settings.seed, std::uint64_t(run_index), std::uint64_t(step), first,
                                  static_cast<float>(model.dropout)};
    cpu::mlp_forward(model, parameters.data(), x.data(), batch, dropout, activations);
    if (after_forward) after_forward(parameters, x, activations);
    cpu::mse_loss_and_gradient(activations.output.data(), y.data(), y.size(), grad_y.data());
    cpu::mlp_backward(model, parameters.data(), x.data(), batch, activations, grad_y.data(),
                      static_cast<float>(model.dropout), gradients.data());
    for (std::size_t i = 0; i < count; ++i) accumulated[i] = (step % k == 0 ? 0.0 : accumulated[i]) + gradients[i];
    if (step % k != k - 1) continue;
    for (double& g : accumulated) g /= k;
    cpu::adam_update(settings.adam, (step + 1) / k, count, parameters.data(), accumulated.data(), m.data(), v.data());
  }
  return parameters;
}

}  // namespace mgpu::float64_reference
