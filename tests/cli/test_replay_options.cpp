// Purpose: tests of `mgpu_bench replay`'s command line (replay_options.hpp): one results file or --help, and one line
// naming what was given for anything else.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/replay_options.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

ReplayOptions parse(std::vector<const char*> words) {
  words.insert(words.begin(), "replay");
  return parse_replay_options(static_cast<int>(words.size()), words.data());
}

std::string refusal(std::vector<const char*> words) {
  try {
    parse(std::move(words));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ReplayOptions, OneFileOrHelp) {
  EXPECT_EQ(parse({"run.h5"}).path, "run.h5");
  EXPECT_FALSE(parse({"run.h5"}).show_help);
  EXPECT_TRUE(parse({"--help"}).show_help);
  EXPECT_TRUE(parse({"run.h5", "-h"}).show_help);
  EXPECT_NE(replay_help_text().find("usage: mgpu_bench replay FILE.h5"), std::string::npos);
}

TEST(ReplayOptions, AnythingElseIsRefusedByName) {
  EXPECT_EQ(refusal({}), "replay: no results file given (mgpu_bench replay FILE.h5)");
  EXPECT_EQ(refusal({"a.h5", "b.h5"}), "replay: one results file, not 'a.h5' and 'b.h5'");
  EXPECT_EQ(refusal({"--runs", "a.h5"}), "replay: unknown option '--runs'");
}

}  // namespace
}  // namespace mgpu
