// Purpose: the all-reduce data check's pattern and verification (host code, shared by the NCCL and MPI engines).
#include "probes/allreduce_engine.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mgpu::allreduce_pattern {
namespace {

// bf16 is the top half of an fp32; the pattern's small integers convert exactly both ways.
std::uint16_t to_bf16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}
float from_bf16_bits(std::uint16_t half) {
  const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

void fill(AllreduceDtype dtype, int rank, std::size_t elements, void* out) {
  // The pattern has period 9; a running phase avoids a division per element (a 1 GiB buffer is 268M of them).
  unsigned phase = (3u * static_cast<unsigned>(rank)) % 9u;
  if (dtype == AllreduceDtype::bf16) {
    auto* values = static_cast<std::uint16_t*>(out);
    for (std::size_t i = 0; i < elements; ++i, phase = phase == 8 ? 0 : phase + 1)
      values[i] = to_bf16_bits(static_cast<float>(static_cast<int>(phase) - 4));
  } else {
    auto* values = static_cast<float*>(out);
    for (std::size_t i = 0; i < elements; ++i, phase = phase == 8 ? 0 : phase + 1)
      values[i] = static_cast<float>(static_cast<int>(phase) - 4);
  }
}

long long count_wrong(AllreduceDtype dtype, int ranks, std::size_t elements, const void* result, bool average) {
  // The sum over ranks of element i also has period 9 in i: compute the 9 expected values once.
  double expected[9];
  for (unsigned phase = 0; phase < 9; ++phase) {
    int sum = 0;
    for (int r = 0; r < ranks; ++r) sum += value(r, phase);
    expected[phase] = average ? static_cast<double>(sum) / ranks : sum;
  }
  const double unit = dtype == AllreduceDtype::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
  // A sum of small integers is exact; so is an average over a power of two ranks (a division by 2^k).
  const double tolerance = (!average || power_of_two(ranks)) ? 0.0 : ranks * 4.0 * unit * 4.0;
  long long wrong = 0;
  unsigned phase = 0;
  for (std::size_t i = 0; i < elements; ++i, phase = phase == 8 ? 0 : phase + 1) {
    const double got = dtype == AllreduceDtype::bf16 ? from_bf16_bits(static_cast<const std::uint16_t*>(result)[i])
                                                     : static_cast<const float*>(result)[i];
    // Written so that NaN fails: !(|d| <= tol).
    if (!(std::fabs(got - expected[phase]) <= tolerance)) ++wrong;
  }
  return wrong;
}

}  // namespace mgpu::allreduce_pattern
