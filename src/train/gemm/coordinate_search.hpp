// Purpose: the search behind the step-level GEMM tuning (CudaTrainer): one pass of coordinate descent over
// independent choices judged by a measured objective (the step's time), a change kept only when it beats the best so
// far by a relative margin, then a check of the result against the start, measured alternately, so that noise or
// drift during the pass cannot leave a slower selection in force; within the margin the start stays (ties go to it).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "platform/error.hpp"

namespace mgpu {

// The margin and final-check rounds of the step-level searches (the GEMMs' options, step_gemm_search.cpp, and the
// step's kernels, CudaTrainer): a change is kept only when the replayed step gets more than 1% faster.
inline constexpr double kStepSearchMargin = 0.01;
inline constexpr int kStepSearchCheckRounds = 3;

struct CoordinateSearch {
  std::vector<int> start;     // the selection the search began from
  std::vector<int> found;     // what the pass kept (before the final check)
  std::vector<int> selected;  // the selection in force when the search returned: `found`, or `start` if the check
                              // measured `found` no faster by the margin
  double start_ms = 0;        // the final check's objective of `start` (the pass's first measurement if unchanged)
  double selected_ms = 0;     // and of `found`
  int evaluations = 0;        // calls of measure()
};

// option_counts[c]: how many options coordinate c has (0 .. count - 1); start[c]: the option it has now.
// apply(c, option): coordinate c takes `option` (called only with a change; `start` is copied first, so it may
// alias the caller's record of the selection); measure(): the objective of the
// selection in force, lower is better. A change is kept when it measures below (1 - margin) x the best so far. If the
// pass changed anything, start and result are then measured alternately, `rounds` times each, and the result is
// kept only if its lowest measurement is below (1 - margin) x the start's lowest.
inline CoordinateSearch coordinate_search(const std::vector<int>& option_counts, const std::vector<int>& start,
                                          double margin, int rounds, const std::function<void(std::size_t, int)>& apply,
                                          const std::function<double()>& measure) {
  MGPU_REQUIRE(option_counts.size() == start.size(), "coordinate_search: " + std::to_string(option_counts.size()) +
                                                         " option counts for " + std::to_string(start.size()) +
                                                         " coordinates");
  for (std::size_t c = 0; c < start.size(); ++c) {
    MGPU_REQUIRE(start[c] >= 0 && start[c] < option_counts[c], "coordinate_search: coordinate " + std::to_string(c) +
                                                                   " starts at option " + std::to_string(start[c]) +
                                                                   " of " + std::to_string(option_counts[c]));
  }
  MGPU_REQUIRE(margin >= 0 && margin < 1 && rounds >= 1, "coordinate_search: margin in [0, 1) and rounds >= 1");
  CoordinateSearch search;
  search.start = start;
  search.selected = start;
  const auto measured = [&] {
    ++search.evaluations;
    return measure();
  };
  double best = measured();
  search.start_ms = best;
  for (std::size_t c = 0; c < search.start.size(); ++c) {
    // The selection in force, with this coordinate at `current`, is the one `best` measured.
    const int current = search.selected[c];
    int in_force = current;
    for (int option = 0; option < option_counts[c]; ++option) {
      if (option == current) continue;
      apply(c, option);
      in_force = option;
      const double ms = measured();
      if (ms < (1 - margin) * best) {
        best = ms;
        search.selected[c] = option;
      }
    }
    if (in_force != search.selected[c]) apply(c, search.selected[c]);
  }
  search.found = search.selected;
  if (search.selected == search.start) {
    search.selected_ms = search.start_ms;
    return search;
  }
  const auto select_all = [&](const std::vector<int>& from, const std::vector<int>& to) {
    for (std::size_t c = 0; c < to.size(); ++c) {
      if (from[c] != to[c]) apply(c, to[c]);
    }
  };
  double start_ms = std::numeric_limits<double>::infinity();
  double selected_ms = std::numeric_limits<double>::infinity();
  for (int round = 0; round < rounds; ++round) {
    select_all(search.selected, search.start);
    start_ms = std::min(start_ms, measured());
    select_all(search.start, search.selected);
    selected_ms = std::min(selected_ms, measured());
  }
  search.start_ms = start_ms;
  search.selected_ms = selected_ms;
  if (!(selected_ms < (1 - margin) * start_ms)) {
    select_all(search.selected, search.start);
    search.selected = search.start;
  }
  return search;
}

}  // namespace mgpu
