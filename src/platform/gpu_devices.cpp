// Purpose: GPU identity, library versions, peer paths and clock sampling through the CUDA runtime and NVML.
#include "platform/gpu_devices.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>

#include "platform/cuda_check.hpp"

namespace mgpu {
namespace {

std::string yes_no(bool value) { return value ? "yes" : "no"; }

std::string pci_bus_id_of(int ordinal) {
  char text[32] = {};
  MGPU_CUDA_CHECK(cudaDeviceGetPCIBusId(text, static_cast<int>(sizeof text), ordinal));
  return text;
}

// nvidia-smi's form: "GPU-" then the 16 bytes as 8-4-4-4-12 lower-case hex digits.
std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string nvlink_text(const std::string& bus_a, const std::string& bus_b) {
  if (!nvml::available()) return "NVLink unknown (" + nvml::status() + ")";
  const std::optional<nvml::Device> a = nvml::device_by_pci_bus_id(bus_a);
  const std::optional<nvml::Device> b = nvml::device_by_pci_bus_id(bus_b);
  if (!a || !b) return "NVLink unknown (NVML does not know the GPU)";
  const std::optional<bool> nvlink = nvml::nvlink_between(*a, *b);
  return "NVLink " + (nvlink ? yes_no(*nvlink) : std::string("unknown (NVML P2P query failed)"));
}

}  // namespace

int visible_cuda_device_count() noexcept {
  int count = 0;
  // Without a driver (cudaErrorInsufficientDriver) or a device (cudaErrorNoDevice) there is simply nothing to use.
  // Clear the error so that no later cudaGetLastError() reports it against an unrelated call.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

GpuDescription describe_gpu(int ordinal) {
  cudaDeviceProp properties{};
  MGPU_CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal));
  GpuDescription gpu;
  gpu.ordinal = ordinal;
  gpu.name = properties.name;
  gpu.uuid = format_uuid(properties.uuid);
  gpu.pci_bus_id = pci_bus_id_of(ordinal);
  gpu.total_memory_bytes = properties.totalGlobalMem;
  // CUDA 13's cudaDeviceProp no longer carries clock rates; NVML's maximum clocks are the reference for the
  // "below 75% of the maximum" flag of docs/measurement.md.
  if (const std::optional<nvml::Device> device = nvml::device_by_pci_bus_id(gpu.pci_bus_id)) {
    gpu.max_sm_clock_mhz = nvml::max_clock_mhz(*device, nvml::Clock::sm).value_or(0);
    gpu.max_memory_clock_mhz = nvml::max_clock_mhz(*device, nvml::Clock::memory).value_or(0);
  }
  return gpu;
}

CudaLibraryVersions cuda_library_versions() {
  CudaLibraryVersions versions;
  int runtime = 0;
  MGPU_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  versions.cuda_runtime = cuda_version_string(runtime);
  int driver = 0;
  // Returns 0 (and success) when no driver is installed.
  MGPU_CUDA_CHECK(cudaDriverGetVersion(&driver));
  versions.cuda_driver = driver > 0 ? cuda_version_string(driver) : "unavailable";
  int major = 0, minor = 0, patch = 0;
  MGPU_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  MGPU_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  MGPU_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  versions.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  int nccl = 0;
  MGPU_NCCL_CHECK(ncclGetVersion(&nccl));
  // NCCL_VERSION_CODE: 10000 * major + 100 * minor + patch since 2.9, 1000 * major + 100 * minor + patch before.
  const int major_scale = nccl >= 20900 ? 10000 : 1000;
  versions.nccl = std::to_string(nccl / major_scale) + "." + std::to_string(nccl % major_scale / 100) + "." +
                  std::to_string(nccl % 100);
  return versions;
}

std::string describe_peer_path(int ordinal, const std::string& peer_pci_bus_id) {
  const std::string own_pci_bus_id = pci_bus_id_of(ordinal);
  const std::string prefix = "peer " + peer_pci_bus_id + ": ";
  // The peer's ordinal among this process's devices, found by comparing bus ids (both from pci_bus_id_of) rather than
  // by cudaDeviceGetByPCIBusId, whose "invalid device" answer for an invisible peer tools report as an API error.
  int devices = 0, peer = -1;
  MGPU_CUDA_CHECK(cudaGetDeviceCount(&devices));
  for (int device = 0; device < devices && peer < 0; ++device)
    if (pci_bus_id_of(device) == peer_pci_bus_id) peer = device;
  if (peer < 0) return prefix + "not visible to this process, " + nvlink_text(own_pci_bus_id, peer_pci_bus_id);
  if (peer == ordinal) return prefix + "same GPU";
  int access = 0, atomics = 0, rank = 0;
  MGPU_CUDA_CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, ordinal, peer));
  MGPU_CUDA_CHECK(cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, ordinal, peer));
  MGPU_CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, ordinal, peer));
  return prefix + "P2P access " + yes_no(access != 0) + ", native atomics " + yes_no(atomics != 0) + ", perf rank " +
         std::to_string(rank) + ", " + nvlink_text(own_pci_bus_id, peer_pci_bus_id);
}

GpuClockSampler::GpuClockSampler(const std::string& pci_bus_id) : device_(nvml::device_by_pci_bus_id(pci_bus_id)) {}

void GpuClockSampler::reset() noexcept {
  sm_mhz_sum_ = 0.0;
  memory_mhz_sum_ = 0.0;
  samples_ = 0;
}

void GpuClockSampler::sample() noexcept {
  if (!device_) return;
  const std::optional<unsigned> sm = nvml::clock_mhz(*device_, nvml::Clock::sm);
  const std::optional<unsigned> memory = nvml::clock_mhz(*device_, nvml::Clock::memory);
  if (!sm || !memory) return;  // a failed reading is skipped, not counted as 0 MHz
  sm_mhz_sum_ += *sm;
  memory_mhz_sum_ += *memory;
  ++samples_;
}

double GpuClockSampler::mean_sm_mhz() const noexcept { return samples_ > 0 ? sm_mhz_sum_ / samples_ : 0.0; }

double GpuClockSampler::mean_memory_mhz() const noexcept { return samples_ > 0 ? memory_mhz_sum_ / samples_ : 0.0; }

}  // namespace mgpu
