// Purpose: LossBuffer (GPU): the run's slots are what the kernels get, and a value written anywhere in the guard after
// them is reported, naming the slot and the stage, while values inside the slots are not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "platform/gpu_devices.hpp"
#include "train/loss_buffer.hpp"

namespace mgpu {
namespace {

class LossBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  }
};

void write_slot(kernels::LossSlots slots, std::size_t slot, float value, cudaStream_t stream) {
  MGPU_CUDA_CHECK(cudaMemcpyAsync(slots.values + slot, &value, sizeof value, cudaMemcpyHostToDevice, stream));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
}

TEST_F(LossBufferTest, HandsOutTheRunsSlotsAndReadsThemBack) {
  CudaStream stream;
  LossBuffer losses(3, stream.get());
  const kernels::LossSlots slots = losses.slots();
  ASSERT_NE(slots.values, nullptr);
  EXPECT_EQ(slots.count, 3u);
  for (std::size_t slot = 0; slot < 3; ++slot) write_slot(slots, slot, 0.5f + float(slot), stream.get());
  EXPECT_EQ(losses.read(stream.get(), "run 0"), (std::vector<float>{0.5f, 1.5f, 2.5f}));
}

// The first slot past the run and the guard's last both count as a write past the array.
TEST_F(LossBufferTest, AWriteIntoTheGuardIsReportedWithItsSlotAndStage) {
  for (std::size_t past : {std::size_t{0}, LossBuffer::kGuardSlots - 1}) {
    CudaStream stream;
    LossBuffer losses(3, stream.get());
    write_slot(losses.slots(), 3 + past, 0.25f, stream.get());
    try {
      losses.check_guard(stream.get(), "set-up");
      ADD_FAILURE() << "a write to slot " << 3 + past << " was not reported";
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("slot " + std::to_string(3 + past) + " of a run of 3 steps"), std::string::npos)
          << message;
      EXPECT_NE(message.find("(set-up)"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace mgpu
