// Purpose: tests of the attribute texts' number and time forms (attribute_text.hpp): the shortest text that reads
// back as the same double, whole numbers in plain digits where those are no longer, and the UTC stamp's form.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

#include "results/attribute_text.hpp"

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

TEST(UtcTimestamp, Iso8601WithAZone) {
  EXPECT_TRUE(std::regex_match(utc_timestamp_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

}  // namespace
}  // namespace mgpu
