// Purpose: tests of run_kinds (run_kinds.hpp): which runs give throughput and which the phases, for every mix of
// runs with and without phase marks.
#include <gtest/gtest.h>

#include <vector>

#include "stats/run_kinds.hpp"

namespace mgpu::stats {
namespace {

TEST(RunKinds, BothKindsSplitUnmarkedForThroughputMarkedForPhases) {
  const RunKinds kinds = run_kinds({false, false, false, false, true, false, true});
  EXPECT_EQ(kinds.throughput, (std::vector<int>{0, 1, 2, 3, 5}));
  EXPECT_EQ(kinds.phases, (std::vector<int>{4, 6}));
  EXPECT_TRUE(kinds.split());
}

TEST(RunKinds, OneKindGivesBothFromEveryRun) {
  for (const bool marked : {false, true}) {
    const RunKinds kinds = run_kinds(std::vector<bool>(3, marked));
    EXPECT_EQ(kinds.throughput, (std::vector<int>{0, 1, 2})) << marked;
    EXPECT_TRUE(kinds.phases.empty()) << marked;
    EXPECT_FALSE(kinds.split());
  }
  // A single run of either kind, and none.
  EXPECT_EQ(run_kinds({true}).throughput, std::vector<int>{0});
  EXPECT_EQ(run_kinds({false}).throughput, std::vector<int>{0});
  EXPECT_TRUE(run_kinds({}).throughput.empty());
}

}  // namespace
}  // namespace mgpu::stats
