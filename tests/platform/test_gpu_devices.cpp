// Purpose: GPU identity, library versions, peer paths and clock sampling (gpu_devices, nvml_library): graceful on a
// machine without a GPU driver, well-formed where there is one.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "platform/gpu_devices.hpp"
#include "platform/nvml_library.hpp"

namespace mgpu {
namespace {

TEST(CudaDevices, CountingDevicesNeverFails) {
  const int count = visible_cuda_device_count();
  EXPECT_GE(count, 0);
  EXPECT_EQ(visible_cuda_device_count(), count);
}

TEST(CudaDevices, NvmlAnswersOrSaysWhyNot) {
  const std::string status = nvml::status();
  EXPECT_FALSE(status.empty());
  if (!nvml::available()) {
    EXPECT_NE(status, "available");
    EXPECT_FALSE(nvml::device_by_pci_bus_id("0000:00:00.0").has_value());
    EXPECT_FALSE(nvml::driver_version().has_value());
  }
}

TEST(CudaDevices, LibraryVersionsAreWellFormed) {
  const CudaLibraryVersions versions = cuda_library_versions();
  EXPECT_TRUE(std::regex_match(versions.cuda_runtime, std::regex(R"(\d+\.\d+)"))) << versions.cuda_runtime;
  EXPECT_TRUE(std::regex_match(versions.cublas, std::regex(R"(\d+\.\d+\.\d+)"))) << versions.cublas;
  EXPECT_TRUE(std::regex_match(versions.nccl, std::regex(R"(\d+\.\d+\.\d+)"))) << versions.nccl;
  EXPECT_TRUE(versions.cuda_driver == "unavailable" ||
              std::regex_match(versions.cuda_driver, std::regex(R"(\d+\.\d+)")))
      << versions.cuda_driver;
  std::cout << "CUDA runtime " << versions.cuda_runtime << ", driver " << versions.cuda_driver << ", cuBLAS "
            << versions.cublas << ", NCCL " << versions.nccl << ", NVML: " << nvml::status() << "\n";
}

TEST(CudaDevices, DescribesEveryVisibleGpu) {
  const int count = visible_cuda_device_count();
  if (count == 0) GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver)";
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const GpuDescription gpu = describe_gpu(ordinal);
    EXPECT_EQ(gpu.ordinal, ordinal);
    EXPECT_FALSE(gpu.name.empty());
    EXPECT_TRUE(
        std::regex_match(gpu.uuid, std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")))
        << gpu.uuid;
    EXPECT_FALSE(gpu.pci_bus_id.empty());
    EXPECT_GT(gpu.total_memory_bytes, 0u);
    if (nvml::available()) {
      EXPECT_GT(gpu.max_sm_clock_mhz, 0u);
      EXPECT_GT(gpu.max_memory_clock_mhz, 0u);
    }
    std::cout << "GPU " << ordinal << ": " << gpu.name << " " << gpu.uuid << " " << gpu.pci_bus_id << ", "
              << gpu.total_memory_bytes << " bytes, max SM " << gpu.max_sm_clock_mhz << " MHz, max memory "
              << gpu.max_memory_clock_mhz << " MHz\n";
    for (int peer = 0; peer < count; ++peer) {
      const std::string path = describe_peer_path(ordinal, describe_gpu(peer).pci_bus_id);
      EXPECT_EQ(path.rfind("peer ", 0), 0u) << path;
      std::cout << "  " << path << "\n";
    }
    EXPECT_NE(describe_peer_path(ordinal, "0000:ff:1f.7").find("not visible"), std::string::npos);
  }
}

TEST(CudaDevices, ClockSamplerAveragesItsSamples) {
  if (visible_cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU";
  GpuClockSampler sampler(describe_gpu(0).pci_bus_id);
  EXPECT_EQ(sampler.available(), nvml::available());
  for (int i = 0; i < 5; ++i) sampler.sample();
  EXPECT_EQ(sampler.samples(), sampler.available() ? 5 : 0);
  if (sampler.available()) {
    EXPECT_GT(sampler.mean_sm_mhz(), 0.0);
    EXPECT_GT(sampler.mean_memory_mhz(), 0.0);
  }
  sampler.reset();
  EXPECT_EQ(sampler.samples(), 0);
  EXPECT_EQ(sampler.mean_sm_mhz(), 0.0);
}

}  // namespace
}  // namespace mgpu
