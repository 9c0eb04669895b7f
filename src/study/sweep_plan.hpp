// Purpose: the sweep as a list of resolved configurations: the grid of BenchOptions expanded (model, global batch,
// trial, GPU count) and each configuration resolved once for the job's back-end (config/resolver.hpp) before any work
// starts.
#pragma once

#include <vector>

#include "cli/options.hpp"
#include "config/configuration.hpp"

namespace mgpu {

// Every configuration of the grid, model by model, batch by batch, each batch trial by trial on every GPU count in the
// order given (so the 1- and 2-GPU runs of a batch's trial are neighbours in time), each the options' settings with
// the grid's and resolved for the back-end (resolve_step). The grid fits the job (validate_for_ranks, checked once
// before); throws UsageError for a step option the back-end cannot honour.
std::vector<Configuration> plan_sweep(const BenchOptions& options, int job_ranks, bool cuda_backend);

// The trials of a job whose --trials was left out (a given one is kept): with --resume, `resumed_trials` (those the
// file holds; 0 when there is no file yet, which the job starts as a new one); on GPUs, auto wherever a batch runs on 1
// GPU and on more, because there each process tunes its own GEMM plan and processes differ more than the runs inside
// one (docs/statistics.md, "Trials"); else one trial, as on the CPU fallback, which tunes nothing, and where no speedup
// is measured.
BenchOptions with_default_trials(const BenchOptions& given, bool on_gpus, int job_ranks, int resumed_trials);

}  // namespace mgpu
