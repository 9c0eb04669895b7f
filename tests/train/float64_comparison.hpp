// Purpose: what the tests that hold GPU results to a float64 reference share: random inputs drawn the same way, and
// the norm-wise relative error of a float result against its float64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace mgpu::float64_comparison {

// `count` draws of N(0, scale^2) from the seed.
inline std::vector<float> normal_values(std::size_t count, float scale, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(count);
  for (float& value : values) value = normal(generator);
  return values;
}

// ||gpu - reference|| / ||reference|| over [first, first + count); infinity if the GPU wrote a non-finite value
// (the NaN poison of an element it never wrote).
inline double relative_error(const std::vector<float>& gpu, const std::vector<double>& reference, std::size_t first = 0,
                             std::size_t count = std::numeric_limits<std::size_t>::max()) {
  const std::size_t end = count == std::numeric_limits<std::size_t>::max() ? reference.size() : first + count;
  EXPECT_EQ(gpu.size(), reference.size());
  double difference = 0.0;
  double norm = 0.0;
  for (std::size_t i = first; i < end && i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) return std::numeric_limits<double>::infinity();
    difference += (gpu[i] - reference[i]) * (gpu[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return norm > 0.0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

}  // namespace mgpu::float64_comparison
