// Purpose: tests of the judgements of recorded facts (stats/run_checks.hpp): a throttled run by its clocks, and the
// verdicts of the replica and math checks by how their recorded texts start.
#include <gtest/gtest.h>

#include "stats/run_checks.hpp"

namespace mgpu::stats {
namespace {

// Below 75% of the rank's maximum SM clock is throttled; at it is not; an unknown clock (0) never flags a run.
TEST(RunChecks, AThrottledRunIsBelowThreeQuartersOfTheMaximumClock) {
  EXPECT_TRUE(is_throttled(990.0, 1980.0));
  EXPECT_TRUE(is_throttled(1484.9, 1980.0));
  EXPECT_FALSE(is_throttled(1485.0, 1980.0));
  EXPECT_FALSE(is_throttled(1980.0, 1980.0));
  EXPECT_FALSE(is_throttled(990.0, 0.0));
  EXPECT_FALSE(is_throttled(0.0, 1980.0));
}

// The readers' verdict of the math check comes from how the recorded text starts ("passed: ..." or "FAILED: ...");
// empty means the file predates the check.
TEST(RunChecks, MathCheckTextsAreJudgedByHowTheyStart) {
  EXPECT_EQ(math_check_verdict(""), MathCheckVerdict::not_checked);
  EXPECT_EQ(math_check_verdict("passed: relative error 1e-06 on rank 0"), MathCheckVerdict::passed);
  EXPECT_EQ(math_check_verdict("FAILED: relative error 0.5 on rank 1 (passed on rank 0)"), MathCheckVerdict::failed);
  EXPECT_EQ(math_check_verdict(" passed"), MathCheckVerdict::failed);
  EXPECT_EQ(math_check_verdict("Xpassed"), MathCheckVerdict::failed);
}

// The replicas agree where the text says identical (or there was one rank); empty means nothing checked them; any
// other text is a difference.
TEST(RunChecks, ReplicaCheckTextsAreJudgedByHowTheyStart) {
  EXPECT_EQ(replica_verdict(""), ReplicaVerdict::not_checked);
  EXPECT_EQ(replica_verdict("identical on 2 ranks (FNV-1a 64 of 6885376 parameters)"), ReplicaVerdict::identical);
  EXPECT_EQ(replica_verdict("1 rank: nothing to compare"), ReplicaVerdict::identical);
  EXPECT_EQ(replica_verdict("rank 1's parameters differ from rank 0's (12 of 6885376)"), ReplicaVerdict::differ);
  EXPECT_EQ(replica_verdict(" identical on 2 ranks"), ReplicaVerdict::differ);
}

}  // namespace
}  // namespace mgpu::stats
