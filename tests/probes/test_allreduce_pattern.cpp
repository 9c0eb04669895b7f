// Purpose: tests of the all-reduce data check: the pattern's exact sums, and that the check fails on a wrong, a
// missing (NaN) or an inexact element, for fp32 and bf16, sum and average.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "probes/allreduce_engine.hpp"

using namespace mgpu;

namespace {

// What a correct all-reduce returns: the element-wise sum (or average) of every rank's pattern, in fp32.
std::vector<float> reduced(int ranks, std::size_t elements, bool average) {
  std::vector<float> result(elements, 0.0f);
  std::vector<float> mine(elements);
  for (int r = 0; r < ranks; ++r) {
    allreduce_pattern::fill(AllreduceDtype::fp32, r, elements, mine.data());
    for (std::size_t i = 0; i < elements; ++i) result[i] += mine[i];
  }
  if (average)
    for (float& value : result) value /= static_cast<float>(ranks);
  return result;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t word = 0;
    std::memcpy(&word, &values[i], sizeof word);
    bits[i] = static_cast<std::uint16_t>(word >> 16);  // exact for the pattern's sums
  }
  return bits;
}

TEST(AllreducePattern, DiffersAcrossRanksAndElementsAndIsNeverAllZero) {
  std::vector<float> rank0(20), rank1(20);
  allreduce_pattern::fill(AllreduceDtype::fp32, 0, 20, rank0.data());
  allreduce_pattern::fill(AllreduceDtype::fp32, 1, 20, rank1.data());
  EXPECT_NE(rank0, rank1);
  for (std::size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(rank0[i], allreduce_pattern::value(0, i));
    EXPECT_GE(rank0[i], -4.0f);
    EXPECT_LE(rank0[i], 4.0f);
  }
}

TEST(AllreducePattern, ACorrectResultPassesForEveryRankCountAndBothOperations) {
  for (int ranks : {1, 2, 3, 4, 8}) {
    for (bool average : {false, true}) {
      const std::vector<float> result = reduced(ranks, 1000, average);
      EXPECT_EQ(allreduce_pattern::count_wrong(AllreduceDtype::fp32, ranks, 1000, result.data(), average), 0)
          << ranks << " ranks, average " << average;
    }
    const std::vector<std::uint16_t> bf16 = to_bf16(reduced(ranks, 1000, false));
    EXPECT_EQ(allreduce_pattern::count_wrong(AllreduceDtype::bf16, ranks, 1000, bf16.data(), false), 0);
  }
}

TEST(AllreducePattern, TheCheckCanFail) {
  std::vector<float> result = reduced(2, 1000, false);
  result[17] += 1.0f;                                     // a wrong value
  result[500] = std::numeric_limits<float>::quiet_NaN();  // an element nobody wrote (poisoned)
  result[999] = std::nextafter(result[999], 100.0f);      // one ulp off: a sum of small integers is exact
  EXPECT_EQ(allreduce_pattern::count_wrong(AllreduceDtype::fp32, 2, 1000, result.data(), false), 3);
  // The sum is not the average: every element whose sum is not 0 fails the other operation's check.
  const std::vector<float> sum = reduced(2, 1000, false);
  const long long nonzero = 1000 - std::count(sum.begin(), sum.end(), 0.0f);
  EXPECT_GT(nonzero, 0);
  EXPECT_EQ(allreduce_pattern::count_wrong(AllreduceDtype::fp32, 2, 1000, sum.data(), true), nonzero);
  std::vector<std::uint16_t> bf16 = to_bf16(reduced(4, 100, false));
  bf16[3] ^= 1;  // the last bit of one bf16
  EXPECT_EQ(allreduce_pattern::count_wrong(AllreduceDtype::bf16, 4, 100, bf16.data(), false), 1);
}

}  // namespace
