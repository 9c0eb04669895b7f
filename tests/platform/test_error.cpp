// Purpose: the one message shape of a failed call, "rank R@host: file:line: call: library: message", with the file
// named by its path inside the repository (the last src/, tests/, bench/ or analysis/ of __FILE__).
#include <gtest/gtest.h>

#include <string>

#include "platform/error.hpp"

namespace mgpu {
namespace {

TEST(RepositoryPath, TheLastRepositoryFolderOfThePathStartsIt) {
  EXPECT_STREQ(repository_path("/home/u/mgpu_bench/src/platform/error.cpp"), "src/platform/error.cpp");
  // A checkout inside a folder named src: the innermost marker wins, whichever comes first in the list.
  EXPECT_STREQ(repository_path("/src/work/tests/platform/test_error.cpp"), "tests/platform/test_error.cpp");
  EXPECT_STREQ(repository_path("/tests/x/src/train/step.cpp"), "src/train/step.cpp");
  EXPECT_STREQ(repository_path("/ci/analysis/bench/run.cpp"), "bench/run.cpp");
  EXPECT_STREQ(repository_path("/ci/bench/analysis/main.cpp"), "analysis/main.cpp");
}

TEST(RepositoryPath, APathWithoutARepositoryFolderIsKeptWhole) {
  EXPECT_STREQ(repository_path("/usr/include/cuda.h"), "/usr/include/cuda.h");
  EXPECT_STREQ(repository_path("error.cpp"), "error.cpp");
  // "src" without its slashes is no marker.
  EXPECT_STREQ(repository_path("/opt/mysrc/a.cpp"), "/opt/mysrc/a.cpp");
}

TEST(CallError, MessageNamesRankHostFileLineCallLibraryAndTheLibrarysText) {
  set_error_origin(3, "node7");
  try {
    throw_call_error("NCCL", "/build/mgpu/src/comm/nccl_communicator.cpp", 42, "ncclAllReduce(...)",
                     "unhandled system error");
    FAIL() << "throw_call_error returned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "rank 3@node7: src/comm/nccl_communicator.cpp:42: ncclAllReduce(...): NCCL: unhandled system error");
  }
  EXPECT_EQ(error_origin(), "rank 3@node7");
}

TEST(CallError, RequireThrowsOnlyWhenItsConditionIsFalse) {
  set_error_origin(0, "h");
  EXPECT_NO_THROW(MGPU_REQUIRE(1 + 1 == 2, "arithmetic"));
  try {
    MGPU_REQUIRE(1 + 1 == 3, "the sum is wrong");
    FAIL() << "MGPU_REQUIRE let a false condition pass";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_EQ(text.rfind("rank 0@h: tests/platform/test_error.cpp:", 0), 0u) << text;
    EXPECT_NE(text.find(": 1 + 1 == 3: mgpu: the sum is wrong"), std::string::npos) << text;
  }
}

TEST(CallError, UsageErrorIsAnError) {
  // main() catches UsageError first (exit status 1 and the user's words) and Error after it.
  try {
    throw UsageError("--batch 0: must be positive");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--batch 0: must be positive");
  }
}

}  // namespace
}  // namespace mgpu
