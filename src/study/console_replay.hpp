// Purpose: `mgpu_bench replay FILE.h5`: the console (stdout) of the job that wrote a results file, re-made from the
// file alone by this build's printing and statistics (console_report.hpp), so that a page shows what the product
// prints of archived data, never a pasted copy.
#pragma once

#include <cstdio>
#include <string>

#include "results/results_reader.hpp"
#include "results/run_record.hpp"
#include "study/run_summary.hpp"

namespace mgpu {

// Rank by rank, run `run` of a configuration as its ranks measured it (the records summarize_run reads): every
// phase of every step, the loss (the file keeps the mean over ranks, which each record gets), the measured steps' wall
// span and whether the run marked its phases.
std::vector<RunRecord> recorded_run(const ConfigurationResults& configuration, int run);

// Prints what the job printed on stdout: its notice and plan, each configuration's banner, run lines, how its runs
// ended and its summary, the sweep table and the verdict. `path` is named where the job named its results file. The
// lines a job records from schema version 15 on (set-up, the unique id's check, notice, plan) are left out of a file
// that predates them. Throws UsageError for a file that is not a results file or holds no configuration.
void replay_console(std::FILE* out, const std::string& path);

}  // namespace mgpu
