// Purpose: the deterministic synthetic task of docs/measurement.md, as pure host/device functions: features ~ N(0,1) of
// global sample i, targets from a fixed random teacher, Glorot-uniform initial weights and inverted-dropout masks.
#pragma once

#include <cstdint>

#include "model/counter_rng.hpp"

namespace mgpu::synthetic {

// Feature j of global sample i: depends only on (seed, i, j), never on the rank or batch that draws it.
// Split for a caller that draws a whole sample: feature(seed, i, j) == feature_of(sample_key(seed, i), j).
MGPU_HOST_DEVICE std::uint64_t sample_key(std::uint64_t seed, std::uint64_t sample) {
  return rng::hash_prefix(seed, rng::kFeature, sample);
}
MGPU_HOST_DEVICE float feature_of(std::uint64_t sample_key, std::uint32_t j) {
  return rng::standard_normal(rng::hash_rest(sample_key, j));
}
MGPU_HOST_DEVICE float feature(std::uint64_t seed, std::uint64_t sample, std::uint32_t j) {
  return feature_of(sample_key(seed, sample), j);
}

// The teacher is one fixed random layer: target_k = tanh(sum_j T[k][j] x_j / sqrt(inputs)), T ~ N(0,1). It does
// not depend on the run, so every run learns the same function and the loss falls.
MGPU_HOST_DEVICE float teacher_weight(std::uint64_t seed, std::uint32_t k, std::uint32_t j) {
  return rng::standard_normal(rng::hash(seed, rng::kTeacher, k, j));
}
MGPU_HOST_DEVICE float teacher_target(float projection, int inputs) {
  return tanhf(projection / sqrtf(static_cast<float>(inputs)));
}

// Glorot (Xavier) uniform, Keras' default for Dense layers: U(-a, a), a = sqrt(6 / (fan_in + fan_out)). Biases
// start at zero. Keyed by (seed, run, flat parameter index), so each run is a fresh, reproducible initialisation.
MGPU_HOST_DEVICE float initial_weight(std::uint64_t seed, std::uint64_t run, std::uint64_t parameter_index, int fan_in,
                                      int fan_out) {
  const float limit = sqrtf(6.0f / static_cast<float>(fan_in + fan_out));
  return (2.0f * rng::uniform01(rng::hash(seed, rng::kInitialWeight, run, parameter_index)) - 1.0f) * limit;
}

// Inverted dropout: unit u of global sample i after hidden layer l at step s of run r is kept with probability
// 1 - p. Keyed by the global sample index, so 1 rank and N ranks drop exactly the same units.
// Split for a kernel that draws a whole layer's mask: dropout_keep(seed, run, step, layer, sample, unit, p) ==
// dropout_keep_of(dropout_key(seed, run, step, layer), sample, unit, p), one mix per unit instead of five.
MGPU_HOST_DEVICE std::uint64_t dropout_key(std::uint64_t seed, std::uint64_t run, std::uint64_t step,
                                           std::uint32_t layer) {
  const std::uint64_t step_layer = (step << 8) | layer;
  return rng::hash_extend(rng::hash_prefix(seed, rng::kDropout, run), step_layer);
}
MGPU_HOST_DEVICE bool dropout_keep_of(std::uint64_t dropout_key, std::uint64_t sample, std::uint32_t unit,
                                      float drop_probability) {
  const std::uint64_t sample_unit = (sample << 24) | unit;
  return rng::uniform01(rng::hash_extend(dropout_key, sample_unit)) >= drop_probability;
}
MGPU_HOST_DEVICE bool dropout_keep(std::uint64_t seed, std::uint64_t run, std::uint64_t step, std::uint32_t layer,
                                   std::uint64_t sample, std::uint32_t unit, float drop_probability) {
  return dropout_keep_of(dropout_key(seed, run, step, layer), sample, unit, drop_probability);
}

}  // namespace mgpu::synthetic
