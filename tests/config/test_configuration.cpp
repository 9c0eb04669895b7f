// Purpose: tests of configuration.hpp: the recorded settings that exist only with overlap on are named by the list
// itself (for_each_recorded_setting's applies), so a curve of the answer never splits on one of them; names of
// configurations and their trials.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/configuration.hpp"

namespace mgpu {
namespace {

TEST(Configuration, OnlyTheOverlapsOwnSettingsApplyOnlyWithOverlap) {
  std::set<std::string> only_with_overlap;
  const Configuration any;
  for_each_recorded_setting(any, [&](const char* name, const auto&, bool) {
    if (applies_only_with_overlap(name)) only_with_overlap.insert(name);
  });
  EXPECT_EQ(only_with_overlap, (std::set<std::string>{"overlap_order", "bucket_mb", "overlap_update"}));
  EXPECT_FALSE(applies_only_with_overlap("overlap"));
  EXPECT_FALSE(applies_only_with_overlap("no_such_setting"));
}

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
