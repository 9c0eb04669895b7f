// Purpose: tests of the console's set-up line (setup_text): rank 0's set-up time and the part of it that verifying
// GEMM candidates took.
#include <gtest/gtest.h>

#include "study/console_report.hpp"

namespace {

TEST(SetupText, NamesTheSetUpTimeAloneWhereNoCandidateWasVerified) {
  EXPECT_EQ(mgpu::setup_text(0.126, 0, 0, 0.0), "0.13 s on rank 0");
}

TEST(SetupText, GivesVerificationsShareOfTheSetUp) {
  EXPECT_EQ(mgpu::setup_text(10.0, 412, 3, 0.52),
            "10.00 s on rank 0, of which 0.52 s (5.2%) verified 412 GEMM candidates (3 rejected)");
  // One candidate is enough for the clause; a set-up too short to measure gives no share rather than a division by 0.
  EXPECT_EQ(mgpu::setup_text(0.0, 1, 0, 0.0),
            "0.00 s on rank 0, of which 0.00 s (0.0%) verified 1 GEMM candidates (0 rejected)");
}

}  // namespace
