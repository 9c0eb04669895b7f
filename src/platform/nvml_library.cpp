// Purpose: NVML through dlopen: the prototypes and constants we use are declared here (nvml.h is not on every build
// machine), the library is loaded and initialised once, and shut down at exit.
#include "platform/nvml_library.hpp"

#include <dlfcn.h>

namespace mgpu::nvml {
namespace {

// From nvml.h (NVML API 12): nvmlReturn_t and the enums are C enums (int); nvmlDevice_t is an opaque pointer.
using Return = int;
constexpr Return kSuccess = 0;                     // NVML_SUCCESS
constexpr int kP2PCapsIndexNvlink = 2;             // NVML_P2P_CAPS_INDEX_NVLINK
constexpr int kP2PStatusOk = 0;                    // NVML_P2P_STATUS_OK
constexpr unsigned kDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
using DeviceHandle = void*;

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using HandleByPciBusIdFn = Return (*)(const char*, DeviceHandle*);
using ClockInfoFn = Return (*)(DeviceHandle, int, unsigned*);
using P2PStatusFn = Return (*)(DeviceHandle, DeviceHandle, int, int*);
using DriverVersionFn = Return (*)(char*, unsigned);

class Library {
 public:
  static Library& instance() {
    static Library library;  // thread-safe one-time load
    return library;
  }
  ~Library() {
    if (initialized_) shutdown_();
    // The library stays mapped: other static destructors may still hold function pointers into it.
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  bool initialized() const { return initialized_; }
  const std::string& status() const { return status_; }

  HandleByPciBusIdFn handle_by_pci_bus_id = nullptr;
  ClockInfoFn clock_info = nullptr;
  ClockInfoFn max_clock_info = nullptr;
  P2PStatusFn p2p_status = nullptr;
  DriverVersionFn driver_version = nullptr;

 private:
  Library() {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* reason = dlerror();
      status_ = std::string("NVML unavailable: ") + (reason != nullptr ? reason : "libnvidia-ml.so.1 not found");
      return;
    }
    const auto init = symbol<InitFn>("nvmlInit_v2");
    shutdown_ = symbol<ShutdownFn>("nvmlShutdown");
    const auto error_string = symbol<ErrorStringFn>("nvmlErrorString");
    if (init == nullptr || shutdown_ == nullptr) {
      status_ = "NVML unavailable: libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlShutdown";
      return;
    }
    const Return result = init();
    if (result != kSuccess) {
      const char* text = error_string != nullptr ? error_string(result) : nullptr;
      status_ = "NVML unavailable: nvmlInit_v2: " + (text != nullptr ? std::string(text) : std::to_string(result));
      return;
    }
    initialized_ = true;
    status_ = "available";
    // Optional entry points: a missing one makes only its query unavailable.
    handle_by_pci_bus_id = symbol<HandleByPciBusIdFn>("nvmlDeviceGetHandleByPciBusId_v2");
    clock_info = symbol<ClockInfoFn>("nvmlDeviceGetClockInfo");
    max_clock_info = symbol<ClockInfoFn>("nvmlDeviceGetMaxClockInfo");
    p2p_status = symbol<P2PStatusFn>("nvmlDeviceGetP2PStatus");
    driver_version = symbol<DriverVersionFn>("nvmlSystemGetDriverVersion");
  }

  template <typename Function>
  Function symbol(const char* name) const {
    return reinterpret_cast<Function>(dlsym(handle_, name));
  }

  void* handle_ = nullptr;
  ShutdownFn shutdown_ = nullptr;
  bool initialized_ = false;
  std::string status_;
};

// The library when initialised, else nullptr; never throws (a failed allocation while loading counts as absent).
Library* loaded() noexcept {
  try {
    Library& library = Library::instance();
    return library.initialized() ? &library : nullptr;
  } catch (...) {
    return nullptr;
  }
}

std::optional<unsigned> query_clock(ClockInfoFn Library::*function, Device device, Clock clock) noexcept {
  Library* library = loaded();
  if (library == nullptr || library->*function == nullptr || device.handle == nullptr) return std::nullopt;
  unsigned mhz = 0;
  if ((library->*function)(device.handle, static_cast<int>(clock), &mhz) != kSuccess) return std::nullopt;
  return mhz;
}

}  // namespace

bool available() noexcept { return loaded() != nullptr; }

std::string status() { return Library::instance().status(); }

std::optional<Device> device_by_pci_bus_id(const std::string& pci_bus_id) noexcept {
  Library* library = loaded();
  if (library == nullptr || library->handle_by_pci_bus_id == nullptr) return std::nullopt;
  DeviceHandle handle = nullptr;
  if (library->handle_by_pci_bus_id(pci_bus_id.c_str(), &handle) != kSuccess || handle == nullptr) {
    return std::nullopt;
  }
  return Device{handle};
}

std::optional<unsigned> clock_mhz(Device device, Clock clock) noexcept {
  return query_clock(&Library::clock_info, device, clock);
}

std::optional<unsigned> max_clock_mhz(Device device, Clock clock) noexcept {
  return query_clock(&Library::max_clock_info, device, clock);
}

std::optional<bool> nvlink_between(Device a, Device b) noexcept {
  Library* library = loaded();
  if (library == nullptr || library->p2p_status == nullptr || a.handle == nullptr || b.handle == nullptr) {
    return std::nullopt;
  }
  int p2p = -1;
  if (library->p2p_status(a.handle, b.handle, kP2PCapsIndexNvlink, &p2p) != kSuccess) return std::nullopt;
  return p2p == kP2PStatusOk;
}

std::optional<std::string> driver_version() noexcept {
  Library* library = loaded();
  if (library == nullptr || library->driver_version == nullptr) return std::nullopt;
  char text[kDriverVersionBufferSize] = {};
  if (library->driver_version(text, kDriverVersionBufferSize) != kSuccess) return std::nullopt;
  try {
    return std::string(text);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace mgpu::nvml
