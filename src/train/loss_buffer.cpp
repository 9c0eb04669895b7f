// Purpose: LossBuffer's guard: filled once with a bit pattern no loss computes (a NaN with a payload) and compared bit
// for bit whenever the losses are read.
#include "train/loss_buffer.hpp"

#include <cstdint>
#include <cstring>

#include "platform/error.hpp"

namespace mgpu {
namespace {

constexpr std::uint32_t kGuardBits = 0x7fc0d0adu;  // a quiet NaN; the loss kernels write a mean of squares or NaN

float guard_value() {
  float value = 0.0f;
  std::memcpy(&value, &kGuardBits, sizeof value);
  return value;
}

bool is_guard(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == kGuardBits;
}

}  // namespace

LossBuffer::LossBuffer(int steps, cudaStream_t stream)
    : steps_(static_cast<std::size_t>(steps)), values_(steps_ + kGuardSlots) {
  std::vector<float> initial(values_.size(), guard_value());
  copy_to_device(values_, initial, stream);
}

std::vector<float> LossBuffer::read(cudaStream_t stream, const std::string& stage) const {
  std::vector<float> all = copy_to_host(values_, stream);
  for (std::size_t slot = steps_; slot < all.size(); ++slot) {
    MGPU_REQUIRE(is_guard(all[slot]),
                 "internal error: a step wrote its loss to slot " + std::to_string(slot) + " of a run of " +
                     std::to_string(steps_) + " steps, past the loss array (" + stage +
                     "); the step's other buffers may be corrupt too, so no result of this configuration is kept");
  }
  all.resize(steps_);
  return all;
}

}  // namespace mgpu
