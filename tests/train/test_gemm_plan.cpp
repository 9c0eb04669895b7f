// Purpose: tests of reading a GEMM plan from a results file's gemm_choices: every form the trainer writes (option
// names with parentheses of their own, a choice changed by the step-level search, rejected candidates), the text a
// plan is handed to other ranks in, and the one-line refusals of text that is no plan.
#include <gtest/gtest.h>

#include <string>

#include "platform/error.hpp"
#include "train/gemm/gemm_plan.hpp"

namespace mgpu {
namespace {

// As CudaTrainer::gemm_choices writes them.
const char* const kChoices =
    "gemm NN m=1024 n=32 k=4800: skinny (32 columns, 8 splits, cluster sum) (6.01 us alone; 57 candidates verified)\n"
    "gemm NT m=4800 n=1024 k=32: cuBLASLt (algorithm 21, tile 18, stages 8, K in 4 parts) (9.50 us alone; the choice "
    "made alone, 9.31 us, was cuBLASLt (algorithm 20, tile 15, stages 6); 40 candidates verified, rejected: skinny "
    "(x): "
    "1 of 2 elements beyond the float64 bound (worst 3 x the bound))\n"
    "gemm TN m=3 n=32 k=256: cuBLASLt (algorithm 6, tile 1, stages 2, cluster shape 2) (2.10 us alone; 9 candidates "
    "verified)\n";

TEST(GemmPlan, ReadsEveryShapesChoiceAsTheTrainerWritesIt) {
  const GemmPlan plan = parse_gemm_choices(kChoices, "f.h5, configuration large_b32_n1_cuda");
  EXPECT_EQ(plan.source, "f.h5, configuration large_b32_n1_cuda");
  ASSERT_EQ(plan.option_of_shape.size(), 3u);
  EXPECT_EQ(plan.option_of_shape.at("NN m=1024 n=32 k=4800"), "skinny (32 columns, 8 splits, cluster sum)");
  // What ran, not what was chosen alone.
  EXPECT_EQ(plan.option_of_shape.at("NT m=4800 n=1024 k=32"),
            "cuBLASLt (algorithm 21, tile 18, stages 8, K in 4 parts)");
  EXPECT_EQ(plan.option_of_shape.at("TN m=3 n=32 k=256"), "cuBLASLt (algorithm 6, tile 1, stages 2, cluster shape 2)");
  EXPECT_TRUE(parse_gemm_choices("", "f.h5").empty());
}

TEST(GemmPlan, ItsTextReadsBackAsTheSamePlan) {
  const GemmPlan plan = parse_gemm_choices(kChoices, "f.h5");
  const GemmPlan again = parse_gemm_choices(gemm_choices_text(plan), "f.h5");
  EXPECT_TRUE(again == plan);
  GemmPlan other = plan;
  other.option_of_shape.begin()->second = "skinny (16 columns, 1 splits)";
  EXPECT_FALSE(other == plan);
}

TEST(GemmPlan, TextThatIsNoPlanIsRefusedNamingTheSourceAndTheLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"gemm NN m=1 n=1 k=1 skinny (no colon) (1.00 us alone)\n", "'gemm NN m=1 n=1 k=1 skinny (no colon)"},
      {"gemm NN m=1 n=1 k=1: skinny (16 columns, 1 splits)\n", "is not a GEMM choice"},
      {"something else\n", "'something else' is not a GEMM choice"},
      {"gemm NN m=1 n=1 k=1: a (1.00 us alone)\ngemm NN m=1 n=1 k=1: b (1.00 us alone)\n",
       "shape NN m=1 n=1 k=1 has two choices, 'a' and 'b'"}};
  for (const auto& [text, expected] : cases) {
    try {
      parse_gemm_choices(text, "f.h5, configuration c");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("--gemm-plan f.h5, configuration c: ", 0), 0u) << message;
      EXPECT_NE(message.find(expected), std::string::npos) << message;
    }
  }
  // The same shape with the same choice twice (files that named two alignments of one shape alike) is one entry.
  EXPECT_EQ(parse_gemm_choices("gemm NN m=1 n=1 k=1: a (1 us alone)\ngemm NN m=1 n=1 k=1: a (2 us alone)\n", "f")
                .option_of_shape.size(),
            1u);
}

// The tuner tunes apart GEMMs whose sizes agree but whose leading dimensions or alignment differ; a plan names each
// apart, so that two choices for one size read back as two entries (they were refused as "two choices" before).
TEST(GemmPlan, GemmsTunedApartHaveNamesApart) {
  // Packed and 16-byte aligned: the sizes alone, as every earlier file names them.
  EXPECT_EQ(gemm_shape_label(false, false, 1024, 32, 4800, 1024, 4800, 1024, 16), "NN m=1024 n=32 k=4800");
  EXPECT_EQ(gemm_shape_label(true, false, 3, 32, 256, 256, 256, 3, 16), "TN m=3 n=32 k=256");
  EXPECT_EQ(gemm_shape_label(false, true, 4800, 342, 65, 4800, 342, 4800, 16), "NT m=4800 n=342 k=65");
  EXPECT_EQ(gemm_shape_label(false, true, 4800, 342, 65, 4800, 342, 4800, 8), "NT m=4800 n=342 k=65 aligned 8");
  EXPECT_EQ(gemm_shape_label(false, true, 4800, 342, 65, 4801, 342, 4800, 16), "NT m=4800 n=342 k=65 lda=4801");
  EXPECT_EQ(gemm_shape_label(false, true, 4800, 342, 65, 4800, 343, 4800, 16), "NT m=4800 n=342 k=65 ldb=343");
  EXPECT_EQ(gemm_shape_label(true, false, 3, 32, 256, 256, 257, 4, 2), "TN m=3 n=32 k=256 ldb=257 ldc=4 aligned 2");
  const GemmPlan plan = parse_gemm_choices(
      "gemm NT m=4800 n=342 k=65: a (1.00 us alone)\ngemm NT m=4800 n=342 k=65 aligned 4: b (1.00 us alone)\n", "f");
  ASSERT_EQ(plan.option_of_shape.size(), 2u);
  EXPECT_EQ(plan.option_of_shape.at("NT m=4800 n=342 k=65 aligned 4"), "b");
}

}  // namespace
}  // namespace mgpu
