// Purpose: tests of the shortest number texts (number_text.hpp): the fewest digits that read back as the same double
// or float, whole numbers in plain digits where those are no longer.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "platform/number_text.hpp"

namespace mgpu {
namespace {

TEST(ShortestDoubleText, FewestDigitsThatReadBackTheSameValue) {
  EXPECT_EQ(shortest_double_text(0.001), "0.001");
  EXPECT_EQ(shortest_double_text(0.3), "0.3");
  EXPECT_EQ(shortest_double_text(0.5), "0.5");
  EXPECT_EQ(shortest_double_text(8), "8");
  EXPECT_EQ(shortest_double_text(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(shortest_double_text(2.5e-7), "2.5e-07");
  for (const double value : {0.001, 0.1 + 0.2, 1.0 / 3.0, 6.02e23, -4.5, 1e-300, 123456.789})
    EXPECT_EQ(std::strtod(shortest_double_text(value).c_str(), nullptr), value) << value;
}

TEST(ShortestDoubleText, WholeNumbersInPlainDigitsUnlessTheExponentIsShorter) {
  // "%g" alone gives 2e+01 and 6e+01, longer than the digits.
  EXPECT_EQ(shortest_double_text(20), "20");
  EXPECT_EQ(shortest_double_text(60), "60");
  EXPECT_EQ(shortest_double_text(-20), "-20");
  EXPECT_EQ(shortest_double_text(100), "100");  // 3 characters against 1e+02's 5
  EXPECT_EQ(shortest_double_text(123456789), "123456789");
  EXPECT_EQ(shortest_double_text(0), "0");
  // Where the exponent form is shorter it stays: 1e+06 (5) against 1000000 (7), 1e+20 against 21 digits.
  EXPECT_EQ(shortest_double_text(1e6), "1e+06");
  EXPECT_EQ(shortest_double_text(1e20), "1e+20");
  EXPECT_EQ(shortest_double_text(12345e3), "12345000");  // 8 against 1.2345e+07's 10
}

TEST(ShortestFloatText, FewestDigitsThatReadBackTheSameFloat) {
  EXPECT_EQ(shortest_float_text(1e-7f), "1e-07");
  EXPECT_EQ(shortest_float_text(0.9f), "0.9");
  EXPECT_EQ(shortest_float_text(0.999f), "0.999");
  EXPECT_EQ(shortest_float_text(1.0f / 3.0f), "0.33333334");  // 8 digits; a double needs 16
  for (const float value : {1e-3f, 0.1f + 0.2f, 1.0f / 3.0f, 6.02e23f, -4.5f, 1e-38f})
    EXPECT_EQ(std::strtof(shortest_float_text(value).c_str(), nullptr), value) << value;
}

}  // namespace
}  // namespace mgpu
