// Purpose: tests of rank_candidates (candidate_ranking.hpp): ties go to the candidate listed first, so that timings
// that differ only by noise give the same options in the same order, and every kind of kernel near the fastest is one.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "train/gemm/candidate_ranking.hpp"

namespace mgpu {
namespace {

using Indices = std::vector<std::size_t>;
constexpr double kNone = std::numeric_limits<double>::infinity();

TEST(CandidateRanking, TheFirstListedOfTheTiesComesFirstThenTheOthersFastestFirst) {
  // Fastest 10.0 (index 3); within 3%: indices 1 (10.29) and 3; index 1 is preferred. Within 25%: 0, 2, 4.
  const std::vector<double> ms{12.4, 10.29, 11.0, 10.0, 12.6, 10.5};
  EXPECT_EQ(rank_candidates(ms, 1.03, 1.25, 8), (Indices{1, 3, 5, 2, 0}));
}

TEST(CandidateRanking, TimesThatDifferOnlyWithinTheTieMarginGiveTheSameOptionsInTheSameOrder) {
  // Two processes time the same three candidates; their noise swaps which is fastest, not the ranking.
  const Indices first = rank_candidates({5.00, 5.10, 6.0}, 1.03, 1.25, 4);
  const Indices second = rank_candidates({5.12, 5.00, 6.0}, 1.03, 1.25, 4);
  EXPECT_EQ(first, (Indices{0, 1, 2}));
  EXPECT_EQ(second, first);
}

TEST(CandidateRanking, TheBoundariesOfTiesAndOptionsAreInclusive) {
  // 10.3 is exactly 1.03 x 10 (a tie, preferred as index 0); 12.5 exactly 1.25 x 10 (an option); 12.51 neither.
  EXPECT_EQ(rank_candidates({10.3, 10.0, 12.5, 12.51}, 1.03, 1.25, 8), (Indices{0, 1, 2}));
  // Just beyond the tie margin the fastest comes first.
  EXPECT_EQ(rank_candidates({10.31, 10.0}, 1.03, 1.25, 8), (Indices{1, 0}));
}

TEST(CandidateRanking, KeepsAtMostTheGivenNumberAndSkipsCandidatesThatDidNotRun) {
  EXPECT_EQ(rank_candidates({kNone, 10.0, 10.1, 10.2, 10.4}, 1.0, 1.25, 2), (Indices{1, 2}));
  EXPECT_EQ(rank_candidates({kNone, 10.0}, 1.03, 1.25, 1), (Indices{1}));
  EXPECT_TRUE(rank_candidates({kNone, kNone}, 1.03, 1.25, 4).empty());
  EXPECT_TRUE(rank_candidates({}, 1.03, 1.25, 4).empty());
}

// The fastest of every other family comes right after the preferred tie, so that a cap on the options never leaves a
// kind of kernel out because candidates of another kind timed a little faster in this process.
TEST(CandidateRanking, TheFastestOfEachFamilyComesBeforeTheRest) {
  // Family 1 (indices 0-3) times 10.0-10.6; family 2 (index 4) 10.8; family 3 (index 5) 13.0, beyond 1.25x.
  const std::vector<double> ms{10.0, 10.2, 10.4, 10.6, 10.8, 13.0};
  const std::vector<int> families{1, 1, 1, 1, 2, 3};
  EXPECT_EQ(rank_candidates(ms, 1.03, 1.25, 3, families), (Indices{0, 4, 1}));
  EXPECT_EQ(rank_candidates(ms, 1.03, 1.25, 3), (Indices{0, 1, 2}));  // one family: fastest first
  // The preferred tie's family is represented by it; the families' fastest come fastest first, then the rest (index 3,
  // family 2's second).
  EXPECT_EQ(rank_candidates({10.1, 10.0, 11.0, 10.5, 12.0}, 1.03, 1.25, 8, {1, 2, 3, 2, 4}), (Indices{0, 1, 2, 4, 3}));
  EXPECT_EQ(rank_candidates({10.1, 10.0, 11.0, 10.5, 12.0}, 1.03, 1.25, 4, {1, 2, 3, 2, 4}), (Indices{0, 1, 2, 4}));
  // Every family's fastest is an option even beyond the number asked for; the rest only up to it.
  EXPECT_EQ(rank_candidates({10.1, 10.0, 11.0, 10.5, 12.0}, 1.03, 1.25, 2, {1, 2, 3, 2, 4}), (Indices{0, 1, 2, 4}));
  EXPECT_THROW(rank_candidates(ms, 1.03, 1.25, 3, {1, 2}), Error);
}

TEST(CandidateRanking, EqualTimesKeepTheListingOrder) {
  EXPECT_EQ(rank_candidates({11.0, 10.0, 11.0, 10.0}, 1.0, 1.25, 4), (Indices{1, 3, 0, 2}));
}

TEST(CandidateRanking, RefusesInconsistentMargins) {
  EXPECT_THROW(rank_candidates({1.0}, 0.99, 1.25, 4), std::exception);
  EXPECT_THROW(rank_candidates({1.0}, 1.3, 1.25, 4), std::exception);
  EXPECT_THROW(rank_candidates({1.0}, 1.03, 1.25, 0), std::exception);
}

}  // namespace
}  // namespace mgpu
