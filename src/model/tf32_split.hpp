// Purpose: the split-TF32 arithmetic of --precision tf32x3 (Ootomo & Yokota, IJHPCA 2022; CUTLASS's 3xTF32), one
// definition for the kernels that write the splits and for the CPU tests that hold it to float64: an fp32 value x as
// big = x rounded to TF32 (10 explicit mantissa bits, round to nearest, ties away from zero: PTX cvt.rna.tf32.f32) and
// small = (x - big) rounded the same way, so that a product a b is a_big b_big + a_big b_small + a_small b_big (the
// small x small term, 2^-22 of |a b|, dropped), every factor exact on tensor cores.
#pragma once

#include <cstdint>
#include <cstring>

#include "platform/host_device.hpp"

namespace mgpu::tf32 {

// The low mantissa bits an fp32 value has beyond TF32's 10.
inline constexpr std::uint32_t kDroppedBits = 13;
inline constexpr std::uint32_t kDroppedMask = (1u << kDroppedBits) - 1;

// x rounded to TF32, the result an fp32 value whose low 13 mantissa bits are 0. Infinities and NaN as they are (the
// NaN poison of a buffer nothing wrote stays NaN in its split).
MGPU_HOST_DEVICE float round_to_tf32(float x) {
#if defined(__CUDA_ARCH__)
  std::uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return __uint_as_float(bits);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return x;
  // Half of the last kept bit added to the magnitude, then the dropped bits cleared: round half away from zero
  // (a carry out of the mantissa moves the exponent up, as rounding must).
  bits = (bits + (1u << (kDroppedBits - 1))) & ~kDroppedMask;
  float rounded;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
#endif
}

// The two TF32 parts of x. x - big is exact in fp32 (it holds at most x's 13 dropped bits), so big + small differs from
// x by the rounding of small alone: at most 2^-11 |x - big| <= 2^-22 |x|.
struct Split {
  float big;
  float small;
};
MGPU_HOST_DEVICE Split split(float x) {
  const float big = round_to_tf32(x);
  return {big, round_to_tf32(x - big)};
}

}  // namespace mgpu::tf32
