// Purpose: tests of the free-space check before a run is appended (require_free_space): what fits passes, what does
// not is refused with one line naming the path and both sizes in KiB, and a file system that cannot say is let
// through (the write itself then reports any failure).
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "platform/error.hpp"
#include "results/disk_space.hpp"

namespace mgpu {
namespace {

std::string refusal(const std::string& path, std::uintmax_t bytes) {
  try {
    require_free_space(path, bytes);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(DiskSpace, WhatFitsPasses) {
  const std::string path = (std::filesystem::temp_directory_path() / "mgpu_disk_space.h5").string();
  EXPECT_EQ(refusal(path, 0), "");
  EXPECT_EQ(refusal(path, 1), "");
}

TEST(DiskSpace, WhatDoesNotFitIsRefusedWithBothSizesInKiB) {
  const std::string path = (std::filesystem::temp_directory_path() / "mgpu_disk_space.h5").string();
  const std::uintmax_t exbibyte = std::uintmax_t{1} << 60;     // more than any test machine's disk
  const std::string message = refusal(path, exbibyte + 1023);  // the remainder below 1 KiB is dropped
  const double free_kib = double(std::filesystem::space(std::filesystem::temp_directory_path()).available) / 1024;
  std::smatch found;
  ASSERT_TRUE(std::regex_match(message, found,
                               std::regex("'" + path +
                                          "': the disk is full \\(([0-9]+) KiB free, the next run needs about "
                                          "1125899906842624 KiB\\)")))
      << message;
  // Other processes write to the same disk: the free figure is the one the check saw, within 10% of now's.
  EXPECT_NEAR(std::stod(found[1].str()), free_kib, 0.1 * free_kib + 1024) << message;
}

TEST(DiskSpace, AFileSystemThatCannotSayIsLetThrough) {
  EXPECT_EQ(refusal("/nonexistent-mgpu-directory/sub/results.h5", std::uintmax_t{1} << 60), "");
}

}  // namespace
}  // namespace mgpu
