// Purpose: the file --resume continues: read once by rank 0, and the trials it holds, which a --resume without
// --trials continues.
#pragma once

#include <optional>
#include <string>

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"
#include "results/results_reader.hpp"

namespace mgpu {

// --resume of an existing file: rank 0 reads it, once, for the trials it holds and for matching the planned
// configurations (open_results); a file that cannot be resumed ends the job on every rank. Empty elsewhere.
std::optional<ResultsFile> read_resumed_file(const BenchOptions& options, const std::string& path,
                                             const MpiContext& mpi);

// The trials a --resume without --trials continues: those the resumed file holds (rank 0 counts; every rank learns).
// A job with trials names its configurations ..._t1, ..._t2, so at least 2 where a name carries a trial; 0 where
// there is no file yet (the job starts it as a new one).
int trials_in_resumed_file(const std::optional<ResultsFile>& resumed, const MpiContext& mpi);

}  // namespace mgpu
