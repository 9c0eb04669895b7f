// Purpose: tests of the measurement subcommands' options: the all-reduce sweep's sizes (whole elements, gradient
// sizes added and labelled, no duplicates), the byte-size syntax and NCCL's choices read through the settings table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/tool_options.hpp"
#include "platform/error.hpp"

using namespace mgpu;

namespace {

AllreduceOptions parse(std::vector<const char*> words) {
  words.insert(words.begin(), "allreduce");
  return parse_allreduce_options(static_cast<int>(words.size()), words.data());
}

TEST(ToolOptions, ByteSizesReadBinaryMultiples) {
  EXPECT_EQ(parse_byte_size("max-bytes", "8"), 8);
  EXPECT_EQ(parse_byte_size("max-bytes", "64K"), 65536);
  EXPECT_EQ(parse_byte_size("max-bytes", "1m"), 1 << 20);
  EXPECT_EQ(parse_byte_size("max-bytes", "1G"), 1LL << 30);
  for (const char* bad : {"", "0", "K", "1.5M", "-8", "5G", "12X"})
    EXPECT_THROW(parse_byte_size("max-bytes", bad), UsageError) << bad;
}

TEST(ToolOptions, SweepIsGeometricPlusTheExactGradientSizes) {
  const AllreduceOptions options = parse({"--min-bytes", "8", "--max-bytes", "1K", "--factor", "4"});
  const std::vector<SweepSize> sizes = options.sizes();
  std::vector<std::int64_t> bytes;
  for (const SweepSize& size : sizes) bytes.push_back(size.bytes);
  EXPECT_EQ(bytes, (std::vector<std::int64_t>{8, 32, 128, 512, 258432LL * 4, 6885376LL * 4}));
  EXPECT_EQ(sizes[4].label, "medium gradient");
  EXPECT_EQ(sizes[5].label, "large gradient");
  EXPECT_EQ(options.command_line, "mgpu_bench allreduce --min-bytes 8 --max-bytes 1K --factor 4");
}

TEST(ToolOptions, SweepRoundsToWholeElementsAndMergesDuplicates) {
  // bf16: 2-byte elements; 1 byte is less than one element and is skipped, 3 rounds down to 2.
  const AllreduceOptions options =
      parse({"--min-bytes", "1", "--max-bytes", "4", "--factor", "3", "--dtype", "bf16", "--model", "none"});
  const std::vector<SweepSize> sizes = options.sizes();
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].bytes, 2);
  // A gradient size that the sweep also reaches is listed once, with its label.
  AllreduceOptions same = parse({"--min-bytes", "1033728", "--max-bytes", "1033728", "--model", "medium"});
  ASSERT_EQ(same.sizes().size(), 1u);
  EXPECT_EQ(same.sizes()[0].label, "medium gradient");
}

TEST(ToolOptions, SweepToTheLimitDoesNotOverflow) {
  const AllreduceOptions options = parse({"--min-bytes", "3G", "--max-bytes", "4G", "--model", "none"});
  ASSERT_EQ(options.sizes().size(), 1u);
  EXPECT_EQ(options.sizes()[0].bytes, 3LL << 30);
}

// --timeout: absent is the watchdog's default (negative), 0 turns the deadline off, a week bounds it.
TEST(ToolOptions, AllreduceTimeoutIsTheWatchdogsDeadline) {
  EXPECT_LT(parse({}).timeout_seconds, 0.0);
  EXPECT_EQ(parse({"--timeout", "0"}).timeout_seconds, 0.0);
  EXPECT_EQ(parse({"--timeout", "2.5"}).timeout_seconds, 2.5);
  EXPECT_EQ(parse({"--timeout", "604800"}).timeout_seconds, 604800.0);
  EXPECT_THROW(parse({"--timeout", "604801"}), UsageError);
  EXPECT_THROW(parse({"--timeout", "-1"}), UsageError);
}

TEST(ToolOptions, AllreduceReadsNcclChoicesAsTrainingDoes) {
  const AllreduceOptions chosen = parse({"--nccl-algo", "tree", "--nccl-proto", "simple"});
  EXPECT_EQ(chosen.nccl_algo, "Tree");
  EXPECT_EQ(chosen.nccl_proto, "Simple");
  const AllreduceOptions left = parse({});
  EXPECT_EQ(left.nccl_algo, kNcclDefault);
  EXPECT_EQ(left.nccl_proto, kNcclDefault);
  try {
    parse({"--nccl-algo", "spiral"});
    FAIL() << "an unknown algorithm was taken";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("spiral"), std::string::npos) << e.what();
  }
}

TEST(ToolOptions, HelpAndExactNames) {
  EXPECT_TRUE(parse({"-h"}).show_help);
  EXPECT_THROW(parse({"--time", "5"}), UsageError);  // not guessed as --timeout
}

TEST(ToolOptions, ProbeBatchesAndModels) {
  const char* words[] = {"probe", "--batches", "16,4096", "--model", "large", "--runs", "3"};
  const ProbeOptions options = parse_probe_options(7, words);
  EXPECT_EQ(options.batches, (std::vector<int>{16, 4096}));
  EXPECT_EQ(options.models, (std::vector<std::string>{"large"}));
  EXPECT_EQ(options.runs, 3);
  const char* bad[] = {"probe", "--batches", "16,"};
  EXPECT_THROW(parse_probe_options(3, bad), UsageError);
}

}  // namespace
