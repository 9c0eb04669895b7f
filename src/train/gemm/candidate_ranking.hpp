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
// preference); families[i] (empty: one family for all) the kind of kernel it is, e.g. cuBLASLt, or our kernel with 8
// splits. Returns the indices of the options, those within options_within x the fastest time: first the most preferred
// (lowest index) of the ties, those within ties_within x the fastest; then the fastest of every other family, all of
// them; then the others while there are fewer than `most` options; each group fastest first (equal times: lower index
// first). Empty when no candidate has a finite time. Why families: in the step a kernel's neighbours change what is
// fastest by the kind of kernel (how many blocks, clusters or parts it launches), and candidates of one kind that time
// alike alone would otherwise fill the options in an order set by noise, leaving another kind out in some processes and
// not in others (H100, large batch 32: the processes that left our kernel out of one shape's options ran a 9% slower
// step).
inline std::vector<std::size_t> rank_candidates(const std::vector<double>& ms, double ties_within,
                                                double options_within, std::size_t most,
                                                const std::vector<int>& families = {}) {
  MGPU_REQUIRE(ties_within >= 1 && options_within >= ties_within && most >= 1,
               "rank_candidates: need 1 <= ties_within (" + std::to_string(ties_within) + ") <= options_within (" +
                   std::to_string(options_within) + ") and at least one option");
  MGPU_REQUIRE(families.empty() || families.size() == ms.size(), "rank_candidates: one family per candidate");
  const auto family = [&](std::size_t i) { return families.empty() ? 0 : families[i]; };
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
  // The fastest of each family not yet represented goes ahead of the rest (others is fastest first).
  std::vector<int> represented = {family(preferred)};
  std::vector<std::size_t> firsts, rest;
  for (std::size_t i : others) {
    const bool first = std::find(represented.begin(), represented.end(), family(i)) == represented.end();
    if (first) represented.push_back(family(i));
    (first ? firsts : rest).push_back(i);
  }
  ranked.push_back(preferred);
  ranked.insert(ranked.end(), firsts.begin(), firsts.end());
  for (std::size_t i : rest) {
    if (ranked.size() >= most) break;
    ranked.push_back(i);
  }
  return ranked;
}

}  // namespace mgpu
