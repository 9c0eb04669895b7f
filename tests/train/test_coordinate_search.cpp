// Purpose: tests of coordinate_search (coordinate_search.hpp), the search of the step-level GEMM tuning, against
// objectives whose optimum is known, noisy ones included.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "train/gemm/coordinate_search.hpp"

namespace mgpu {
namespace {

// An objective over a selection: a base time plus each coordinate's cost of its option, and a log of what the search
// did, so that a test can check the selection in force at every measurement against what the search was told.
struct Objective {
  std::vector<std::vector<double>> cost;  // [coordinate][option]
  std::vector<int> in_force;
  std::vector<double> noise;  // added to successive measurements, in turn (empty: exact)
  int measured = 0;
  int applied = 0;

  double value() const {
    double total = 100;
    for (std::size_t c = 0; c < cost.size(); ++c) total += cost[c][in_force[c]];
    return total;
  }
  CoordinateSearch search(double margin, int rounds = 3) {
    std::vector<int> counts;
    for (const auto& options : cost) counts.push_back(static_cast<int>(options.size()));
    return coordinate_search(
        counts, in_force, margin, rounds,
        [&](std::size_t c, int option) {
          EXPECT_NE(in_force[c], option) << "apply without a change";
          in_force[c] = option;
          ++applied;
        },
        [&] {
          const double extra = noise.empty() ? 0.0 : noise[measured % noise.size()];
          ++measured;
          return value() + extra;
        });
  }
};

TEST(CoordinateSearch, FindsTheOptimumOfIndependentCostsAndLeavesItInForce) {
  Objective objective{{{0, -1, 2}, {0}, {3, 0, 1, -2}}, {0, 0, 0}};
  const CoordinateSearch found = objective.search(0.001);
  EXPECT_EQ(found.start, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(found.selected, (std::vector<int>{1, 0, 3}));
  EXPECT_EQ(found.found, found.selected);
  EXPECT_EQ(objective.in_force, found.selected);
  // One pass: the start, 2 + 0 + 3 other options; then 3 rounds of start and result.
  EXPECT_EQ(found.evaluations, 1 + 5 + 6);
  EXPECT_EQ(objective.measured, found.evaluations);
  EXPECT_DOUBLE_EQ(found.start_ms, 103);  // the start with coordinate 2 at option 0
  EXPECT_DOUBLE_EQ(found.selected_ms, 97);
}

TEST(CoordinateSearch, KeepsTheStartWhenNothingBeatsItByTheMargin) {
  // Options 1% faster, with a 2% margin: nothing changes, the start is in force, and no final check is needed.
  Objective objective{{{0, -1}, {0, -1}}, {0, 0}};
  const CoordinateSearch found = objective.search(0.02);
  EXPECT_EQ(found.selected, found.start);
  EXPECT_EQ(objective.in_force, found.start);
  EXPECT_EQ(found.evaluations, 3);
  EXPECT_DOUBLE_EQ(found.start_ms, found.selected_ms);
}

TEST(CoordinateSearch, StartsFromAnyOptionAndPutsTheKeptOneBack) {
  // Start at the last option of a coordinate whose best is in the middle: the options after the kept one are tried
  // and the kept one is put back.
  Objective objective{{{5, -3, 0, 4}}, {2}};
  const CoordinateSearch found = objective.search(0.0);
  EXPECT_EQ(found.selected, (std::vector<int>{1}));
  EXPECT_EQ(objective.in_force, (std::vector<int>{1}));
}

TEST(CoordinateSearch, TheFinalCheckUndoesAChangeThatOnlyNoiseMadeLookFaster) {
  // Option 1 costs the same as option 0, but the measurement that tries it comes out 5 lower (noise); the alternate
  // final check measures both as equal, so the start is kept and put back in force.
  Objective objective{{{0, 0}}, {0}, {0, -5, 0, 0, 0, 0, 0, 0}};
  const CoordinateSearch found = objective.search(0.001);
  EXPECT_EQ(found.found, (std::vector<int>{1}));
  EXPECT_EQ(found.selected, (std::vector<int>{0}));
  EXPECT_EQ(objective.in_force, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(found.start_ms, 100);
  EXPECT_DOUBLE_EQ(found.selected_ms, 100);
}

TEST(CoordinateSearch, TheFinalCheckKeepsTheStartUnlessTheResultBeatsItByTheMargin) {
  // Option 1 truly costs 1 less (1% of 100); the pass measures it 3 lower (noise), beyond the 2% margin, but the
  // final check sees 99 against 100: within the margin, a tie, so the start stays.
  Objective tied{{{0, -1}}, {0}, {0, -2, 0, 0, 0, 0, 0, 0}};
  const CoordinateSearch kept = tied.search(0.02);
  EXPECT_EQ(kept.found, (std::vector<int>{1}));
  EXPECT_EQ(kept.selected, (std::vector<int>{0}));
  EXPECT_EQ(tied.in_force, (std::vector<int>{0}));
  EXPECT_DOUBLE_EQ(kept.selected_ms, 99);
  // 3 less: beyond the margin in the check too, so the change stays.
  Objective faster{{{0, -3}}, {0}};
  EXPECT_EQ(faster.search(0.02).selected, (std::vector<int>{1}));
}

TEST(CoordinateSearch, RefusesInconsistentArguments) {
  const auto apply = [](std::size_t, int) {};
  const auto measure = [] { return 1.0; };
  EXPECT_THROW(coordinate_search({2, 2}, {0}, 0.01, 1, apply, measure), std::exception);
  EXPECT_THROW(coordinate_search({2}, {2}, 0.01, 1, apply, measure), std::exception);
  EXPECT_THROW(coordinate_search({2}, {0}, 1.0, 1, apply, measure), std::exception);
  EXPECT_THROW(coordinate_search({2}, {0}, 0.01, 0, apply, measure), std::exception);
}

}  // namespace
}  // namespace mgpu
