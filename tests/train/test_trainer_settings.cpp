// Purpose: the training settings' run schedule under --timing interleaved: which runs mark their phases, and how many
// runs a configuration makes, so that R runs without marks and max(1, R / 4) marked ones always result.
#include <gtest/gtest.h>

#include <algorithm>

#include "train/trainer.hpp"

namespace mgpu {
namespace {

TEST(InterleavedRuns, EveryFifthRunMarksItsPhases) {
  // 50 unmarked runs (the default): 62 runs, marked at 4, 9, ..., 59.
  ASSERT_EQ(interleaved_run_count(50), 62);
  for (int run = 0; run < 62; ++run) EXPECT_EQ(interleaved_run_marks_phases(run, 62), run % 5 == 4) << run;
}

TEST(InterleavedRuns, FewerThanFiveRunsMarkTheirLastRun) {
  // R = 1, 2, 3 give 2, 3, 4 runs, the last marked; R = 4 gives 5 runs, run 4 marked by the every-fifth rule.
  for (int unmarked = 1; unmarked <= 4; ++unmarked) {
    const int total = interleaved_run_count(unmarked);
    EXPECT_EQ(total, unmarked + 1) << unmarked;
    for (int run = 0; run < total; ++run)
      EXPECT_EQ(interleaved_run_marks_phases(run, total), run == total - 1) << unmarked << " run " << run;
  }
  // One run in all (a configuration of one run): it marks its phases.
  EXPECT_TRUE(interleaved_run_marks_phases(0, 1));
}

TEST(InterleavedRuns, UnmarkedRunsAreWhatWasAskedAndMarkedOnesAQuarter) {
  for (int unmarked = 1; unmarked <= 200; ++unmarked) {
    const int total = interleaved_run_count(unmarked);
    int marked = 0;
    for (int run = 0; run < total; ++run) marked += interleaved_run_marks_phases(run, total);
    EXPECT_EQ(total - marked, unmarked) << unmarked;
    EXPECT_EQ(marked, std::max(1, unmarked / 4)) << unmarked;
  }
}

}  // namespace
}  // namespace mgpu
