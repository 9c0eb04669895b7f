// Purpose: tests of configuration identity for --resume: what measures the same is the same, whatever the host.
#include <gtest/gtest.h>

#include "results/configuration_identity.hpp"

namespace mgpu {
namespace {

results_schema::ConfigurationMetadata sample() {
  results_schema::ConfigurationMetadata m;
  m.name = "large_b32_n2_cuda";
  m.configuration.training.model.name = "large";
  m.configuration.training.model.widths = {4800, 1024, 3};
  m.configuration.training.model.dropout = 0.3;
  m.configuration.training.global_batch = 32;
  m.local_batch = 16;
  m.configuration.gpus = 2;
  m.device = "cuda";
  m.configuration.training.warmup_steps = 10;
  m.configuration.training.measured_steps = 100;
  m.configuration.runs_requested = 50;
  m.configuration.training.seed = 1;
  m.configuration.training.adam.learning_rate = 1e-3f;
  m.nccl_environment = {"NCCL_ALGO=Tree", "NCCL_NVLS_ENABLE=0"};
  m.environment_preset = "pcie-host-bridge";
  m.hosts = {"node1", "node1"};
  m.gpu_names = {"NVIDIA H200", "NVIDIA H200"};
  m.gpu_uuids = {"GPU-a", "GPU-b"};
  m.gpu_pci_bus_ids = {"0000:00:06.0", "0000:00:07.0"};
  m.peer_topology = {"rank 1 NVLink", "rank 0 NVLink"};
  m.max_sm_clock_mhz = {1980, 1980};
  m.max_memory_clock_mhz = {3201, 3201};
  m.command_line = "mgpu_bench --config bench/study.ini";
  m.started_utc = "2026-11-21T06:00:00Z";
  return m;
}

TEST(ConfigurationIdentity, TheSameMeasurementMatches) { EXPECT_EQ(identity_difference(sample(), sample()), ""); }

TEST(ConfigurationIdentity, WhereAndWhenItRanDoNotCount) {
  results_schema::ConfigurationMetadata elsewhere = sample();
  elsewhere.hosts = {"node7", "node7"};
  elsewhere.gpu_uuids = {"GPU-c", "GPU-d"};
  elsewhere.gpu_pci_bus_ids = {"0000:00:08.0", "0000:00:09.0"};
  elsewhere.peer_topology = {"x", "y"};
  elsewhere.max_sm_clock_mhz = {1900, 1900};
  elsewhere.max_memory_clock_mhz = {0, 0};
  elsewhere.command_line = "mgpu_bench --resume";
  elsewhere.started_utc = "2026-11-22T00:00:00Z";
  elsewhere.attempt = 3;
  // What the step-level tuning chose is an outcome of the process, not a setting.
  elsewhere.gemm_choices = "gemm TN m=8 n=8 k=8: cuBLASLt (algorithm 1, tile 1) (3.00 us alone)\n";
  EXPECT_EQ(identity_difference(sample(), elsewhere), "");
  EXPECT_TRUE(is_condition_attribute("hosts"));
  EXPECT_FALSE(is_condition_attribute("seed"));
}

TEST(ConfigurationIdentity, EverySettingCounts) {
  const auto differs = [](auto change) {
    results_schema::ConfigurationMetadata stored = sample();
    change(stored);
    return identity_difference(sample(), stored);
  };
  // The schema's first attribute as much as any other.
  EXPECT_EQ(differs([](auto& m) { m.implementation = "pytorch-graph"; }),
            "implementation is 'pytorch-graph' in the file, '" + std::string(results_schema::kImplementation) +
                "' in this command");
  EXPECT_EQ(differs([](auto& m) { m.configuration.training.seed = 2; }), "seed is 2 in the file, 1 in this command");
  EXPECT_EQ(differs([](auto& m) { m.configuration.runs_requested = 20; }),
            "runs_requested is 20 in the file, 50 in this command");
  EXPECT_NE(differs([](auto& m) { m.environment_preset = "nvlink-default"; }).find("environment_preset"),
            std::string::npos);
  EXPECT_NE(differs([](auto& m) { m.nccl_environment = {"NCCL_NVLS_ENABLE=0"}; }).find("nccl_environment"),
            std::string::npos);
  EXPECT_NE(differs([](auto& m) {
              m.gpu_names = {"NVIDIA H100", "NVIDIA H100"};
            }).find("gpu_names"),
            std::string::npos);
  EXPECT_NE(differs([](auto& m) { m.configuration.training.model.dropout = 0.0; }).find("dropout"), std::string::npos);
  // Step options: a resumed configuration must have run the step the same way.
  EXPECT_EQ(differs([](auto& m) { m.configuration.training.overlap = true; }),
            "overlap is 'on' in the file, 'off' in this command");
  EXPECT_EQ(differs([](auto& m) { m.configuration.training.fused_optimizer = true; }),
            "fused_optimizer is 'on' in the file, 'off' in this command");
  EXPECT_EQ(differs([](auto& m) { m.configuration.training.gemm_tuning = GemmTuning::step; }),
            "gemm_tuning is 'step' in the file, 'alone' in this command");
  EXPECT_NE(differs([](auto& m) { m.configuration.training.adam.learning_rate = 1e-4; }).find("adam_learning_rate"),
            std::string::npos);
}

}  // namespace
}  // namespace mgpu
