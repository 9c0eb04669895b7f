// Purpose: tests of settle_gpu_clocks (gpu_clocks.hpp) on a GPU: it ends with its window steady, within its limit,
// and a second call right after settles at the same pace of the fixed work.
#include <gtest/gtest.h>

#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "train/gpu_clocks.hpp"

namespace mgpu {
namespace {

TEST(GpuClocks, SettlesWithinTheLimitAndStaysSettled) {
  if (visible_cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  CudaStream stream;
  const ClockSettling first = settle_gpu_clocks(stream.get());
  EXPECT_TRUE(first.settled) << first.launches << " launches in " << first.seconds << " s";
  EXPECT_GE(first.launches, kSettledWindow);
  EXPECT_LE(first.seconds, kMostSeconds + 0.5);
  EXPECT_GT(first.last_ms, 0.0);
  EXPECT_LE(first.last_ms, first.first_ms * 1.01) << "the clocks do not fall under load";
  // Straight after, the clocks are up.
  const ClockSettling second = settle_gpu_clocks(stream.get());
  EXPECT_TRUE(second.settled);
  EXPECT_NEAR(second.last_ms, first.last_ms, 0.02 * first.last_ms);
}

}  // namespace
}  // namespace mgpu
