// Purpose: which of a GEMM shape's timed candidates become its options, and in what order (TunedGemm): candidates
// whose times lie within a tie margin of the fastest are ties, and the first of them in the fixed order the candidates
// were listed in comes first, so that processes whose timings differ only by noise choose the same algorithm.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "platform/error.hpp"

namespace mgpu {

// ms[i]: candidate i's time (infinity: it did not run or was rejected), i its place in a fixed listing order (its
// preference). Returns the indices of at most `most` options, those within options_within x the fastest time: first
// the most preferred (lowest index) of the ties, those within ties_within x the fastest; then the others, fastest first
// (equal times: lower index first). Empty when no candidate has a finite time.
inline std::vector<std::size_t> rank_candidates(const std::vector<double>& ms, double ties_within,
                                                double options_within, std::size_t most) {
  MGPU_REQUIRE(ties_within >= 1 && options_within >= ties_within && most >= 1,
               "rank_candidates: need 1 <= ties_within (" + std::to_string(ties_within) + ") <= options_within (" +
                   std::to_string(options_within) + ") and at least one option");
  double fastest = std::numeric_limits<double>::infinity();
  for (double t : ms) fastest = std::min(fastest, t);
  std::vector<std::size_t> ranked;
  if (!(fastest < std::numeric_limits<double>::infinity())) return ranked;
  std::size_t preferred = 0;
  while (!(ms[preferred] <= ties_within * fastest)) ++preferred;
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (i != preferred && ms[i] <= options_within * fastest) others.push_back(i);
  }
  std::stable_sort(others.begin(), others.end(), [&](std::size_t x, std::size_t y) { return ms[x] < ms[y]; });
  ranked.push_back(preferred);
  for (std::size_t i : others) {
    if (ranked.size() == most) break;
    ranked.push_back(i);
  }
  return ranked;
}

}  // namespace mgpu
