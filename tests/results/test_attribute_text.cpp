// Purpose: tests of the attribute texts' time form (attribute_text.hpp; their numbers' is platform/number_text.hpp's):
// the UTC stamp.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "results/attribute_text.hpp"

namespace mgpu {
namespace {

TEST(UtcTimestamp, Iso8601WithAZone) {
  EXPECT_TRUE(std::regex_match(utc_timestamp_now(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

}  // namespace
}  // namespace mgpu
