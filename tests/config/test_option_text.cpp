// Purpose: tests of the option texts the settings table's options are given in (option_text.hpp): lists of whole
// numbers, a 64-bit number, preset names and NCCL's names, each refusal one line naming the option and the text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/option_text.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

std::string message_of(void (*parse)()) {
  try {
    parse();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(OptionText, WholeNumberListsWithinTheirBounds) {
  EXPECT_EQ(parse_int_list("--batch", "4,8192", 1, 1 << 24), (std::vector<int>{4, 8192}));
  EXPECT_EQ(message_of([] { parse_int_list("--batch", "8,0", 1, 16); }), "--batch 0: must be from 1 to 16");
  EXPECT_EQ(message_of([] { parse_int_list("--batch", "8,x", 1, 16); }), "--batch '8,x': 'x' is not a whole number");
  EXPECT_EQ(message_of([] { parse_int_list("--batch", "8,8", 1, 16); }), "--batch '8,8': 8 is given twice");
  EXPECT_EQ(message_of([] { parse_int_list("--batch", "8,", 1, 16); }), "--batch '8,': empty list item");
}

TEST(OptionText, SixtyFourBitNumbersAreReadWhole) {
  EXPECT_EQ(parse_unsigned64("--seed", "18446744073709551615"), 18446744073709551615ull);
  EXPECT_EQ(parse_unsigned64("--seed", "0"), 0u);
  for (const char* bad : {"-1", "", "1e3", "18446744073709551616", " 1"}) {
    try {
      parse_unsigned64("--seed", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--seed '" + std::string(bad) + "': must be a non-negative 64-bit integer");
    }
  }
}

TEST(OptionText, ModelListsArePresetsEachOnce) {
  EXPECT_EQ(parse_model_list("medium,large"), (std::vector<std::string>{"medium", "large"}));
  EXPECT_NE(message_of([] { parse_model_list("huge"); }).find("--model 'huge'"), std::string::npos);
  EXPECT_EQ(message_of([] { parse_model_list("large,large"); }), "--model 'large,large': large is given twice");
}

TEST(OptionText, NcclListsKeepExclusionAndSpelling) {
  EXPECT_EQ(nccl_algo_env_value("ring,tree"), "Ring,Tree");
  EXPECT_EQ(nccl_algo_env_value("^nvls"), "^NVLS");
  EXPECT_EQ(nccl_proto_env_value("ll128"), "LL128");
  EXPECT_NE(message_of([] { nccl_algo_env_value("fastest"); }).find("--nccl-algo 'fastest': unknown 'fastest'"),
            std::string::npos);
}

}  // namespace
}  // namespace mgpu
