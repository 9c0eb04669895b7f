// Purpose: tests of probe_kernels::hold_sms: while it holds every SM, a kernel that needs shared memory cannot start,
// and it starts once the host releases the hold; a hold never released ends at its time limit; a count outside
// 1..SMs is refused. Skips without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kernels/probe_kernels.cuh"
#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

class HoldSmsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
    }
    MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
  }
  int sms_ = 0;
};

constexpr unsigned long long kSecond = 1000000000ull;

TEST_F(HoldSmsTest, KernelsThatNeedSharedMemoryWaitUntilTheHoldIsReleased) {
  CudaStream holding, beside;
  DeviceFlag release, released_already;
  released_already.set(1);
  CudaEvent beside_done;
  probe_kernels::hold_sms(sms_, release.device_pointer(), 10 * kSecond, holding.get());
  // One more block of the same kind: it needs a whole SM's shared memory, so no SM can take it while the hold lasts.
  probe_kernels::hold_sms(1, released_already.device_pointer(), 10 * kSecond, beside.get());
  beside_done.record(beside.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(beside_done.query()) << "a kernel needing shared memory ran beside a hold of every SM";
  release.set(1);
  MGPU_CUDA_CHECK(cudaStreamSynchronize(beside.get()));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(holding.get()));
  EXPECT_TRUE(beside_done.query());
}

TEST_F(HoldSmsTest, AHoldNeverReleasedEndsAtItsLimit) {
  CudaStream holding;
  DeviceFlag release;
  const auto start = std::chrono::steady_clock::now();
  probe_kernels::hold_sms(1, release.device_pointer(), kSecond / 10, holding.get());
  MGPU_CUDA_CHECK(cudaStreamSynchronize(holding.get()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(seconds, 0.1);
  EXPECT_LT(seconds, 5.0);
}

TEST_F(HoldSmsTest, ACountOutsideTheDevicesSmsIsRefused) {
  CudaStream holding;
  DeviceFlag release;
  EXPECT_THROW(probe_kernels::hold_sms(0, release.device_pointer(), kSecond, holding.get()), Error);
  EXPECT_THROW(probe_kernels::hold_sms(sms_ + 1, release.device_pointer(), kSecond, holding.get()), Error);
}

}  // namespace
}  // namespace mgpu
