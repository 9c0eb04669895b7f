// Purpose: the few NVML queries we need (clocks, NVLink between two GPUs, driver version), with NVML loaded by
// dlopen at first use and never linked, so the binary starts on machines without a GPU driver. Includes no CUDA
// header; compiled in every build. Every query answers "not available" (an empty optional) instead of failing.
#pragma once

#include <optional>
#include <string>

namespace mgpu::nvml {

// NVML's nvmlClockType_t values.
enum class Clock : int { sm = 1, memory = 2 };

// An opaque nvmlDevice_t.
struct Device {
  void* handle = nullptr;
};

// True when libnvidia-ml.so.1 was loaded and nvmlInit_v2 succeeded (tried once, at the first call of any function).
bool available() noexcept;
// "available", or why not (library missing, initialisation failed), for the run conditions and messages.
std::string status();

// The GPU at a PCI bus id as CUDA prints it ("0000:1b:00.0"); empty when NVML is unavailable or knows no such GPU.
// NVML sees every GPU of the node, also those CUDA_VISIBLE_DEVICES hides from this process.
std::optional<Device> device_by_pci_bus_id(const std::string& pci_bus_id) noexcept;

// The clock now, and the maximum it can reach, in MHz.
std::optional<unsigned> clock_mhz(Device device, Clock clock) noexcept;
std::optional<unsigned> max_clock_mhz(Device device, Clock clock) noexcept;

// Whether NVML reports peer-to-peer over NVLink between the two GPUs (nvmlDeviceGetP2PStatus, NVLink index).
std::optional<bool> nvlink_between(Device a, Device b) noexcept;

// The kernel driver's version, e.g. "580.159.04".
std::optional<std::string> driver_version() noexcept;

}  // namespace mgpu::nvml
