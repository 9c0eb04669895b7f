// Purpose: the tests' view of the float64 reference (train/float64_reference.hpp): the run itself, how close a run
// comes to an undecidable ReLU, and the relative error every trainer (CPU fallback, CUDA) is held to.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "train/cpu_mlp.hpp"
#include "train/float64_reference.hpp"
#include "train/trainer.hpp"

namespace mgpu::testing_reference {

using float64_reference::ForwardObserver;
using float64_reference::training_run;

// How close the run comes to a ReLU that fp32 cannot decide: the smallest |z| / sum_l |w_l h_l| + |b| over every
// hidden pre-activation z = W h + b of every step's forward (the float64 run of training_run). The rounding of an
// fp32 product is a small multiple of 2^-24 sqrt(fan_in) of that sum; a pre-activation that close to zero may fall
// on either side of the ReLU in any fp32 implementation, and the trajectories of two correct implementations then
// part by lr-sized Adam steps. A margin below kUndecidableReluMargin says a failed comparison may be the case's
// conditioning rather than a wrong step.
inline constexpr double kUndecidableReluMargin = 1e-4;
inline double smallest_relu_margin(const TrainingSettings& settings, int run_index) {
  const MlpSpec& model = settings.model;
  const std::vector<DenseLayer> layers = model.layers();
  const int batch = settings.global_batch;
  double smallest = std::numeric_limits<double>::infinity();
  training_run(
      settings, run_index,
      [&](const std::vector<double>& p, const std::vector<double>& x, const cpu::MlpActivations<double>& activations) {
        for (std::size_t l = 0; l < layers.size(); ++l) {
          const DenseLayer& layer = layers[l];
          if (!layer.hidden) continue;
          // Layer l's input: the data, or layer l - 1's output after ReLU and dropout (what the next GEMM reads).
          const double* input = l == 0 ? x.data() : activations.hidden[l - 1].data();
          for (int b = 0; b < batch; ++b) {
            for (int o = 0; o < layer.fan_out; ++o) {
              const double* w = p.data() + layer.weight_offset + std::size_t(o) * layer.fan_in;
              const double* h = input + std::size_t(b) * layer.fan_in;
              double z = p[layer.bias_offset + o], magnitude = std::abs(z);
              for (int i = 0; i < layer.fan_in; ++i) {
                z += w[i] * h[i];
                magnitude += std::abs(w[i] * h[i]);
              }
              if (magnitude > 0.0) smallest = std::min(smallest, std::abs(z) / magnitude);
            }
          }
        }
      });
  return smallest;
}

// ||a - reference|| / ||reference||.
template <typename Real>
double relative_error(const std::vector<Real>& a, const std::vector<double>& reference) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double d = i < a.size() ? double(a[i]) - reference[i] : reference[i];
    difference += d * d;
    norm += reference[i] * reference[i];
  }
  return std::sqrt(difference / norm);
}

}  // namespace mgpu::testing_reference
