// Purpose: tests of the back-end's lifecycle rules (backend.hpp) that need no GPU: which configurations of a job a
// device reset follows.
#include <gtest/gtest.h>

#include "study/backend.hpp"

namespace mgpu {
namespace {

// Every configuration but the last is followed by a reset, so the next one starts on a fresh context; a job of one
// configuration resets nothing.
TEST(Backend, EveryConfigurationButTheLastIsFollowedByADeviceReset) {
  EXPECT_FALSE(device_reset_follows(0, 1));
  for (std::size_t index = 0; index < 3; ++index) EXPECT_TRUE(device_reset_follows(index, 4)) << index;
  EXPECT_FALSE(device_reset_follows(3, 4));
}

}  // namespace
}  // namespace mgpu
