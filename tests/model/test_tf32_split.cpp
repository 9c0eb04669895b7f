// Purpose: holds the split-TF32 arithmetic of --precision tf32x3 (model/tf32_split.hpp, the host side of what the
// kernels compute) to float64: the rounding to TF32 at its boundaries, big + small reproducing x to 2^-22, and the
// three products of a split product within fp32's rounding of the exact one, where big x big alone is not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "model/tf32_split.hpp"

namespace mgpu {
namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

bool is_tf32(float x) { return (bits_of(x) & tf32::kDroppedMask) == 0; }

// Values of every exponent from 2^-100 to 2^100 (no subnormals: TF32 keeps fp32's exponent range, so their relative
// rounding is coarser, and no step's operand is one), of both signs, with random mantissas.
std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> exponent(-100.0, 100.0);
  std::vector<float> values;
  for (std::size_t i = 0; i < count; ++i) {
    const float x = static_cast<float>(std::exp2(exponent(generator)));
    values.push_back(generator() % 2 == 0 ? x : -x);
  }
  return values;
}

TEST(Tf32Split, RoundsToTenMantissaBitsHalfAwayFromZero) {
  const float one = 1.0f;
  EXPECT_EQ(tf32::round_to_tf32(one), one);
  EXPECT_EQ(tf32::round_to_tf32(1.0f + 0x1p-10f), 1.0f + 0x1p-10f);  // the last kept bit: exact
  EXPECT_EQ(tf32::round_to_tf32(1.0f + 0x1p-11f - 0x1p-23f), one);   // just below half of it: down
  EXPECT_EQ(tf32::round_to_tf32(1.0f + 0x1p-11f), 1.0f + 0x1p-10f);  // half: away from zero
  EXPECT_EQ(tf32::round_to_tf32(-1.0f - 0x1p-11f), -1.0f - 0x1p-10f);
  EXPECT_EQ(tf32::round_to_tf32(1.0f + 0x1p-10f + 0x1p-11f), 1.0f + 0x1p-9f);  // half, odd: still away (not even)
  EXPECT_EQ(tf32::round_to_tf32(2.0f - 0x1p-23f), 2.0f);                       // the carry moves the exponent up
  EXPECT_EQ(tf32::round_to_tf32(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(tf32::round_to_tf32(-0.0f)));
  EXPECT_EQ(tf32::round_to_tf32(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  // A buffer's NaN poison stays NaN in both parts, whatever its payload (one in the dropped bits only included).
  for (std::uint32_t nan_bits : {0x7fc00000u, 0x7f800001u, 0xff800fffu}) {
    float nan;
    std::memcpy(&nan, &nan_bits, sizeof nan);
    EXPECT_TRUE(std::isnan(tf32::split(nan).big)) << std::hex << nan_bits;
    EXPECT_TRUE(std::isnan(tf32::split(nan).small)) << std::hex << nan_bits;
  }
}

// big + small differs from x by small's own rounding, the lowest of x's bits: at most 2^-23 |x| (2^-22 is the stated
// bound); without small, x is off by up to 2^-11 |x|.
TEST(Tf32Split, BigPlusSmallReproducesXTo2ToTheMinus22) {
  double worst_split = 0.0, worst_big_alone = 0.0;
  for (float x : random_floats(200000, 1)) {
    const tf32::Split parts = tf32::split(x);
    ASSERT_TRUE(is_tf32(parts.big) && is_tf32(parts.small)) << x;
    const double relative = std::abs(double(x) - (double(parts.big) + double(parts.small))) / std::abs(double(x));
    const double big_alone = std::abs(double(x) - double(parts.big)) / std::abs(double(x));
    ASSERT_LE(relative, 0x1p-22) << x;
    ASSERT_LE(big_alone, 0x1p-11) << x;
    worst_split = std::max(worst_split, relative);
    worst_big_alone = std::max(worst_big_alone, big_alone);
  }
  EXPECT_GT(worst_split, 0x1p-25);      // small is a rounding too, not x - big itself
  EXPECT_GT(worst_big_alone, 0x1p-12);  // what dropping small would cost
}

// One product a b as the tensor cores form it from the parts (each factor exact, the sum here in float64): a_big b_big
// + a_big b_small + a_small b_big. Relative to |a b|, the dropped small x small term and the parts' rounding leave at
// most 3 x 2^-22 (fp32's own rounding of one product is 2^-24); big x big alone is off by up to about 2^-10.
TEST(Tf32Split, ThreeProductsKeepFp32AccuracyAndBigTimesBigAloneDoesNot) {
  const std::vector<float> a = random_floats(100000, 2), b = random_floats(100000, 3);
  double worst_three = 0.0, worst_one = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const tf32::Split x = tf32::split(a[i]), y = tf32::split(b[i]);
    const double exact = double(a[i]) * double(b[i]);
    const double three = double(x.big) * y.big + double(x.big) * y.small + double(x.small) * y.big;
    const double one = double(x.big) * y.big;
    worst_three = std::max(worst_three, std::abs(three - exact) / std::abs(exact));
    worst_one = std::max(worst_one, std::abs(one - exact) / std::abs(exact));
  }
  EXPECT_LE(worst_three, 3 * 0x1p-22);
  EXPECT_GT(worst_one, 0x1p-11);
}

// A dot product over K = 4800 (large's first layer) of values like the step's: the three products summed in float64
// stay within 2^-22 of the exact sum relative to sum |a_k b_k| (each term's error above, random in sign, cancels);
// big x big alone is off by far more (31 x 2^-22 with this seed).
TEST(Tf32Split, ADotProductOfThreeProductsIsWithinFp32RoundingOfFloat64) {
  std::mt19937_64 generator(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  constexpr int kK = 4800;
  double exact = 0.0, three = 0.0, one = 0.0, magnitude = 0.0;
  for (int k = 0; k < kK; ++k) {
    const float a = normal(generator), b = normal(generator);
    const tf32::Split x = tf32::split(a), y = tf32::split(b);
    exact += double(a) * double(b);
    three += double(x.big) * y.big + double(x.big) * y.small + double(x.small) * y.big;
    one += double(x.big) * y.big;
    magnitude += std::abs(double(a) * double(b));
  }
  EXPECT_LE(std::abs(three - exact) / magnitude, 0x1p-22);
  EXPECT_GT(std::abs(one - exact) / magnitude, 8 * 0x1p-22);
}

}  // namespace
}  // namespace mgpu
