// Purpose: tests of the sweep's progress reporting: durations, the status line, plain lines off a terminal and the
// in-place line on one.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "study/sweep_progress.hpp"

namespace mgpu {
namespace {

TEST(SweepProgress, FormatsDurations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(3725), "1h02m05s");
  EXPECT_EQ(format_duration(-3), "0s");
}

std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  for (int c; (c = std::fgetc(file)) != EOF;) text += static_cast<char>(c);
  return text;
}

TEST(SweepProgress, CountsConfigurationsAndRuns) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  SweepProgress progress(out, false, 3, 6);
  progress.skip(2);
  EXPECT_EQ(progress.status_line().rfind("[1/3 done] | elapsed 0s | left ?", 0), 0u) << progress.status_line();
  progress.start_configuration("medium_b8_n2_cpu", 2);
  progress.finish_run();
  EXPECT_NE(progress.status_line().find("[1/3 done] medium_b8_n2_cpu run 1/2"), std::string::npos);
  EXPECT_NE(progress.status_line().find("left ~"), std::string::npos);
  progress.finish_run();
  progress.finish_configuration();
  EXPECT_EQ(progress.status_line().rfind("[2/3 done]", 0), 0u);
  const std::string text = contents(out);
  // Off a terminal: one plain line when a configuration starts and one when it ends, no control characters.
  EXPECT_NE(text.find("# progress: [1/3 done] medium_b8_n2_cpu run 0/2"), std::string::npos) << text;
  EXPECT_NE(text.find("# progress: medium_b8_n2_cpu finished; [2/3 done]"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  std::fclose(out);
}

TEST(SweepProgress, RedrawsOneLineOnATerminal) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  SweepProgress progress(out, true, 1, 1);
  progress.start_configuration("large_b32_n1_cuda", 1);
  progress.clear();
  progress.finish_run();
  progress.finish_configuration();
  const std::string text = contents(out);
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;  // never a new line: the same line, redrawn
  EXPECT_NE(text.find("\r\033[K[0/1 done] large_b32_n1_cuda run 0/1"), std::string::npos);
  EXPECT_NE(text.find("\r\033[K[1/1 done]"), std::string::npos);
  std::fclose(out);
}

// Under Open MPI isatty says "terminal" even when mpirun writes to a log, so the launchers' MGPU_PROGRESS decides.
TEST(SweepProgress, MgpuProgressDecidesOverIsatty) {
  std::FILE* file = std::tmpfile();  // not a terminal
  ASSERT_NE(file, nullptr);
  const char* saved = std::getenv("MGPU_PROGRESS");
  const std::string kept = saved != nullptr ? saved : "";
  unsetenv("MGPU_PROGRESS");
  EXPECT_FALSE(progress_in_place(file));
  setenv("MGPU_PROGRESS", "line", 1);
  EXPECT_TRUE(progress_in_place(file));
  setenv("MGPU_PROGRESS", "plain", 1);
  EXPECT_FALSE(progress_in_place(file));
  setenv("MGPU_PROGRESS", "something else", 1);  // not a choice: isatty decides
  EXPECT_FALSE(progress_in_place(file));
  if (saved != nullptr)
    setenv("MGPU_PROGRESS", kept.c_str(), 1);
  else
    unsetenv("MGPU_PROGRESS");
  std::fclose(file);
}

}  // namespace
}  // namespace mgpu
