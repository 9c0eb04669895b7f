// Purpose: what the results record about the GPUs: how many are visible, each one's identity and limits, the
// CUDA/cuBLAS/NCCL versions, the path between two ranks' GPUs, and the clocks sampled while a run executes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "platform/nvml_library.hpp"

namespace mgpu {

// Number of CUDA devices this process sees; 0 when there is no driver or no device. Never throws, never prints.
int visible_cuda_device_count() noexcept;

struct GpuDescription {
  int ordinal = 0;
  std::string name;        // "NVIDIA H200"
  std::string uuid;        // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string pci_bus_id;  // "0000:1b:00.0", as cudaDeviceGetPCIBusId prints it
  std::size_t total_memory_bytes = 0;
  unsigned max_sm_clock_mhz = 0;      // from NVML; 0 when NVML is unavailable
  unsigned max_memory_clock_mhz = 0;  // from NVML; 0 when NVML is unavailable
};

// Throws mgpu::Error (CUDA's message) for an ordinal this process cannot see.
GpuDescription describe_gpu(int ordinal);

struct CudaLibraryVersions {
  std::string cuda_runtime;  // "13.0"
  std::string cuda_driver;   // highest CUDA version the driver supports, "13.0"; "unavailable" without a driver
  std::string cublas;        // "13.1.0"
  std::string nccl;          // "2.28.3"
};
CudaLibraryVersions cuda_library_versions();

// How GPU `ordinal` reaches the GPU at `peer_pci_bus_id`, e.g.
// "peer 0000:1b:00.0: P2P access yes, native atomics yes, perf rank 0, NVLink yes". A peer that CUDA does not show
// this process (CUDA_VISIBLE_DEVICES) is reported as "not visible to this process", with NVML's NVLink status still.
std::string describe_peer_path(int ordinal, const std::string& peer_pci_bus_id);

// Means of the SM and memory clocks over samples taken while a run executes (NVML; sampling is a no-op when NVML
// is unavailable, and the means are then 0).
class GpuClockSampler {
 public:
  explicit GpuClockSampler(const std::string& pci_bus_id);
  bool available() const noexcept { return device_.has_value(); }
  void reset() noexcept;
  void sample() noexcept;  // one reading of both clocks
  double mean_sm_mhz() const noexcept;
  double mean_memory_mhz() const noexcept;
  int samples() const noexcept { return samples_; }

 private:
  std::optional<nvml::Device> device_;
  double sm_mhz_sum_ = 0.0;
  double memory_mhz_sum_ = 0.0;
  int samples_ = 0;
};

}  // namespace mgpu
