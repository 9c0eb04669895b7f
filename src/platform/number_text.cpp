// Purpose: shortest_double_text, shortest_float_text and with_thousands (number_text.hpp).
#include "platform/number_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace mgpu {

std::string shortest_double_text(double value) {
  char text[32] = {};
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  // "%g" writes a whole number with trailing zeros in exponent form (20 as "2e+01"); plain digits are shorter there.
  char whole[32] = {};
  if (std::isfinite(value) && value == std::trunc(value) && std::fabs(value) < 1e17) {
    std::snprintf(whole, sizeof whole, "%.0f", value);
    if (std::strlen(whole) <= std::strlen(text)) return whole;
  }
  return text;
}

std::string shortest_float_text(float value) {
  char text[32] = {};
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) break;
  }
  return text;
}

std::string with_thousands(unsigned long long value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

}  // namespace mgpu
