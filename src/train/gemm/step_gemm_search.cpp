// Purpose: step-level GEMM tuning (step_gemm_search.hpp).
#include "train/gemm/step_gemm_search.hpp"

#include <chrono>
#include <cstdio>
#include <vector>

#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/mpi_check.hpp"
#include "platform/wall_clock.hpp"
#include "train/gemm/coordinate_search.hpp"

namespace mgpu {

namespace {

// The number of options each shape may search: with several ranks every one replays the same steps (each holds
// collectives) and takes the same decisions, so the same shapes (the same local batch) and, per shape, the fewest
// options any rank has (each rank its own options, its choice made alone first).
std::vector<int> options_every_rank_has(const std::vector<TunedGemm::ShapeOptions>& shapes, MPI_Comm comm) {
  std::vector<int> counts;
  for (const TunedGemm::ShapeOptions& shape : shapes) counts.push_back(static_cast<int>(shape.options.size()));
  int shape_count[2] = {static_cast<int>(shapes.size()), -static_cast<int>(shapes.size())};
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, shape_count, 2, MPI_INT, MPI_MIN, comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's GEMM shapes for step-level tuning (MPI_Iallreduce)"));
  MGPU_REQUIRE(shape_count[0] == -shape_count[1],
               "step-level GEMM tuning: the ranks ran different numbers of GEMM "
               "shapes (" +
                   std::to_string(shape_count[0]) + " to " + std::to_string(-shape_count[1]) + ")");
  if (!counts.empty()) {
    MGPU_MPI_CHECK(
        MPI_Iallreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_INT, MPI_MIN, comm, &request));
    MGPU_MPI_CHECK(wait_bounded(request, "every rank's GEMM options for step-level tuning (MPI_Iallreduce)"));
  }
  return counts;
}

// "step-level GEMM tuning: N replay timings in S s, ...", then each changed shape's choice.
std::string search_report(const std::vector<TunedGemm::ShapeOptions>& shapes, const CoordinateSearch& search,
                          double seconds) {
  const char* outcome = search.found == search.start      ? " (no option beat the margin: none changed)"
                        : search.selected == search.start ? " (no faster in the final check: none changed)"
                                                          : "";
  char line[256];
  std::snprintf(line, sizeof line,
                "step-level GEMM tuning: %d replay timings in %.2f s, step replay %.4f ms with the choices made alone, "
                "%.4f ms with the search's%s\n",
                search.evaluations, seconds, search.start_ms, search.selected_ms, outcome);
  std::string report = line;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (search.selected[s] == search.start[s]) continue;
    report += "  gemm " + shapes[s].shape + ": " + shapes[s].options[search.start[s]] + " -> " +
              shapes[s].options[search.selected[s]] + "\n";
  }
  return report;
}

}  // namespace

std::string search_step_gemms(TunedGemm& gemm, MPI_Comm comm, const std::function<void()>& recapture_step,
                              const std::function<double()>& time_step_ms) {
  // Why: each GEMM shape was tuned alone, by back-to-back calls, but in the step a kernel's neighbours change what is
  // fastest (a block that takes a whole SM keeps the next kernel's blocks from starting beside it; a cluster's blocks
  // must find room in one GPC). On H200 two options that timed alike alone made large batch 32's step differ by 6%. So
  // the options nearly as fast alone are tried in the replayed step, one shape at a time in TunedGemm::shape_options
  // order (coordinate_search.hpp), each kept only when the step gets faster by more than the margin, in the pass and
  // again in the final check. Smaller differences are ties that keep the choices made alone (themselves broken by a
  // fixed order, candidate_ranking.hpp), so that independent processes on one machine run the same plan; a 1% margin
  // still takes the step-level effect that made this search worth having (kStepSearchMargin).
  const std::vector<TunedGemm::ShapeOptions> shapes = gemm.shape_options();
  // Every search starts from the choices made alone (an earlier trainer of this process may have changed a shape's),
  // judged by the slowest rank's time.
  bool recapture = false;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (shapes[s].selected == 0) continue;
    gemm.select(s, 0);
    recapture = true;
  }
  const std::vector<int> counts = options_every_rank_has(shapes, comm);
  const std::vector<int> start(shapes.size(), 0);
  const auto apply = [&](std::size_t shape, int option) {
    gemm.select(shape, option);
    recapture = true;
  };
  const auto measure = [&] {
    if (recapture) recapture_step();
    recapture = false;
    return time_step_ms();
  };
  const auto began = std::chrono::steady_clock::now();
  const CoordinateSearch search =
      coordinate_search(counts, start, kStepSearchMargin, kStepSearchCheckRounds, apply, measure);
  if (recapture) recapture_step();
  const double seconds = seconds_since(began);
  return search_report(shapes, search, seconds);
}

}  // namespace mgpu
