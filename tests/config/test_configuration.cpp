// Purpose: tests of configuration.hpp: names of configurations and their trials, and the runs a timing makes.
#include <gtest/gtest.h>

#include <string>

#include "config/configuration.hpp"

namespace mgpu {
namespace {

TEST(Configuration, NamesCarryModelBatchGpusDeviceAndTrial) {
  Configuration c;
  c.training.model = preset_model("large");
  c.training.global_batch = 32;
  c.gpus = 2;
  EXPECT_EQ(c.name("cuda"), "large_b32_n2_cuda");
  c.trials = 3;
  c.trial = 2;
  EXPECT_EQ(c.name("cuda"), "large_b32_n2_cuda_t2");
  c.training.model = custom_model({37, 64, 5}, 0.0);
  EXPECT_EQ(c.name("cpu"), "37-64-5_b32_n2_cpu_t2");
  EXPECT_EQ(without_trial(c.name("cpu")), "37-64-5_b32_n2_cpu");
}

TEST(Configuration, RunsMadeAddInterleavedTimingsMarkedRuns) {
  EXPECT_EQ(runs_made(10, TimingMode::events), 10);
  EXPECT_EQ(runs_made(10, TimingMode::interleaved), 12);
  EXPECT_EQ(runs_made(3, TimingMode::interleaved), 4);
}

}  // namespace
}  // namespace mgpu
