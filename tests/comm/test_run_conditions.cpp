// Purpose: the NCCL conditions recorded with every configuration: the NCCL_* snapshot, the environment preset, the
// command line's NCCL options applied before the communicator exists, and which rank says so (rank 0 alone).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "comm/run_conditions.hpp"

namespace mgpu {
namespace {

// Each test starts and ends without the variables it touches.
class RunConditions : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char* name :
         {"NCCL_ALGO", "NCCL_PROTO", "NCCL_ZZ_TEST", "NCCL_AA_TEST", "XNCCL_TEST", "MGPU_ENVIRONMENT_PRESET"})
      unsetenv(name);
  }
  // What a call printed on stdout.
  template <typename Call>
  static std::string printed(Call call) {
    ::testing::internal::CaptureStdout();
    call();
    return ::testing::internal::GetCapturedStdout();
  }
};

TEST_F(RunConditions, NcclEnvironmentIsEveryNcclVariableSorted) {
  setenv("NCCL_ZZ_TEST", "1", 1);
  setenv("NCCL_AA_TEST", "x y", 1);
  setenv("XNCCL_TEST", "not ours", 1);  // the prefix must start the name
  std::vector<std::string> found;
  for (const std::string& entry : nccl_environment())
    if (entry.find("_TEST=") != std::string::npos) found.push_back(entry);
  EXPECT_EQ(found, (std::vector<std::string>{"NCCL_AA_TEST=x y", "NCCL_ZZ_TEST=1"}));
}

TEST_F(RunConditions, EnvironmentPresetIsNoneUnlessALauncherSetIt) {
  EXPECT_EQ(environment_preset(), "none");
  setenv("MGPU_ENVIRONMENT_PRESET", "", 1);
  EXPECT_EQ(environment_preset(), "none");
  setenv("MGPU_ENVIRONMENT_PRESET", "pcie-host-bridge", 1);
  EXPECT_EQ(environment_preset(), "pcie-host-bridge");
}

TEST_F(RunConditions, SettingAVariableReturnsWhatItReplaced) {
  EXPECT_EQ(set_nccl_variable("NCCL_ALGO", "tree"), "");
  EXPECT_EQ(set_nccl_variable("NCCL_ALGO", "ring"), "tree");
  EXPECT_STREQ(std::getenv("NCCL_ALGO"), "ring");
  EXPECT_EQ(nccl_variable_or_default("NCCL_ALGO"), "ring");
  EXPECT_EQ(nccl_variable_or_default("NCCL_PROTO"), "default");
  setenv("NCCL_PROTO", "", 1);
  EXPECT_EQ(nccl_variable_or_default("NCCL_PROTO"), "default");
}

TEST_F(RunConditions, OnlyRankZeroNotesThatTheCommandLineOverridesTheEnvironment) {
  setenv("NCCL_ALGO", "ring", 1);
  EXPECT_EQ(printed([] { apply_nccl_option(1, "NCCL_ALGO", "tree"); }), "");
  EXPECT_STREQ(std::getenv("NCCL_ALGO"), "tree");  // every rank applies it
  EXPECT_EQ(printed([] { apply_nccl_option(0, "NCCL_ALGO", "ring"); }),
            "# note: the command line sets NCCL_ALGO=ring over NCCL_ALGO=tree from the environment\n");
  // The same value, an unset variable, or no value: nothing to say (and no value changes nothing).
  EXPECT_EQ(printed([] { apply_nccl_option(0, "NCCL_ALGO", "ring"); }), "");
  EXPECT_EQ(printed([] { apply_nccl_option(0, "NCCL_PROTO", "simple"); }), "");
  EXPECT_EQ(printed([] { apply_nccl_option(0, "NCCL_ALGO", ""); }), "");
  EXPECT_STREQ(std::getenv("NCCL_ALGO"), "ring");
}

TEST_F(RunConditions, OnTheCpuFallbackRankZeroNotesThatNcclOptionsDoNothing) {
  const std::string note = "# note: --nccl-algo/--nccl-proto have no effect on the CPU fallback (MPI_Allreduce)\n";
  EXPECT_EQ(printed([] { apply_nccl_options(0, true, "tree", ""); }), note);
  EXPECT_EQ(printed([] { apply_nccl_options(0, true, "", "simple"); }), note);
  EXPECT_EQ(printed([] { apply_nccl_options(1, true, "tree", "simple"); }), "");
  EXPECT_EQ(printed([] { apply_nccl_options(0, true, "", ""); }), "");
  EXPECT_EQ(printed([] { apply_nccl_options(0, false, "tree", ""); }), "");  // tree was already set: no override
  EXPECT_STREQ(std::getenv("NCCL_ALGO"), "tree");
  EXPECT_STREQ(std::getenv("NCCL_PROTO"), "simple");
}

}  // namespace
}  // namespace mgpu
