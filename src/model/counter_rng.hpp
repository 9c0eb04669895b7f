// Purpose: a counter-based random generator: every value is a pure function of (seed, stream, indices), so the CPU,
// the GPU and any number of ranks draw exactly the same numbers for the same sample, unit or parameter.
#pragma once

#include <cmath>
#include <cstdint>

#include "platform/host_device.hpp"

namespace mgpu::rng {

// What a random value is for; separates the streams so that, e.g., data never correlate with initial weights.
enum Stream : std::uint64_t { kFeature = 1, kTeacher = 2, kInitialWeight = 3, kDropout = 4 };

// SplitMix64's finalizer: a bijective 64-bit mixer with good avalanche.
MGPU_HOST_DEVICE std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Hash of a key made of up to five 64-bit words; each word goes through the mixer so their order matters.
// The hash in parts, for callers that draw many values sharing their first words (the features of one sample, the
// dropout mask of one layer): the shared prefix is mixed once, and
// hash(seed, stream, a, b, c) == hash_extend(hash_extend(hash_prefix(seed, stream, a), b), c), the same bits.
MGPU_HOST_DEVICE std::uint64_t hash_prefix(std::uint64_t seed, std::uint64_t stream, std::uint64_t a) {
  return mix64(mix64(seed ^ (stream * 0xD6E8FEB86659FD93ull)) ^ a);
}
MGPU_HOST_DEVICE std::uint64_t hash_extend(std::uint64_t prefix, std::uint64_t word) { return mix64(prefix ^ word); }
MGPU_HOST_DEVICE std::uint64_t hash_rest(std::uint64_t prefix, std::uint64_t b = 0, std::uint64_t c = 0) {
  return hash_extend(hash_extend(prefix, b), c);
}
MGPU_HOST_DEVICE std::uint64_t hash(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b = 0,
                                    std::uint64_t c = 0) {
  return hash_rest(hash_prefix(seed, stream, a), b, c);
}

// Uniform in [0, 1) from the top 24 bits (exactly representable in float).
MGPU_HOST_DEVICE float uniform01(std::uint64_t h) { return static_cast<float>(h >> 40) * 5.9604644775390625e-8f; }

// Standard normal by Box-Muller from two disjoint 24-bit fields of one hash.
MGPU_HOST_DEVICE float standard_normal(std::uint64_t h) {
  const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 5.9604644775390625e-8f;  // (0, 1]: log is finite
  const float u2 = static_cast<float>((h >> 16) & 0xFFFFFFull) * 5.9604644775390625e-8f;
  return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530717958647692f * u2);
}

}  // namespace mgpu::rng
