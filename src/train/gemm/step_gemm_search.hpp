// Purpose: step-level GEMM tuning, the last stage of GEMM selection (after each shape's candidates were verified and
// timed alone, tuned_gemm.hpp): among each shape's options, the ones with which the whole step, replayed, is fastest.
// The trainer says how to re-capture and time its step; the choices are made here and left in force in the TunedGemm.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "train/gemm/tuned_gemm.hpp"

namespace mgpu {

// Collective over `comm` (every rank replays the same steps, each holding collectives, and takes the same decisions):
// selects, shape by shape in TunedGemm::shape_options order, the options that make the step faster by more than a
// margin (coordinate_search.hpp), starting from the choices made alone. recapture_step() makes the next replays run
// the current selection; time_step_ms() is the slowest rank's replayed step. Returns what it found, for the report.
std::string search_step_gemms(TunedGemm& gemm, MPI_Comm comm, const std::function<void()>& recapture_step,
                              const std::function<double()>& time_step_ms);

}  // namespace mgpu
