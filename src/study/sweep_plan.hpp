// Purpose: the sweep as a list of configurations: the one place each configuration's settings come from (model,
// global batch, GPU count and every per-configuration training option), expanded from BenchOptions and validated
// against the job before any work starts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "model/mlp_spec.hpp"
#include "train/trainer.hpp"

namespace mgpu {

// One configuration of a sweep. The driver reads per-configuration settings only from here: a new per-configuration
// option is a field here, filled in plan_sweep and passed on by training_settings(cuda_backend).
struct BenchConfiguration {
  MlpSpec model;
  int global_batch = 32;
  int gpus = 1;  // runs on ranks 0..gpus-1 of the job, through communicators of their own
  int warmup_steps = 10;
  int measured_steps = 100;
  int runs = 50;            // every run of the configuration (--timing interleaved: its marked runs included)
  int runs_requested = 50;  // what --runs said: the runs throughput is computed from (recorded as runs_requested)
  std::uint64_t seed = 1;
  double max_noise_percent = 0;  // --max-noise (0 = off)
  double max_time_seconds = 0;   // --max-time (0 = no limit)
  int trial = 1;                 // which trial of the configuration this is (1 to trials)
  int trials = 1;                // --trials
  // --graph, --overlap, --fuse-optimizer, --bucket-mb, --precision, --grad-dtype, --timing, --accumulate
  StepOptions step;
  // --gemm-plan: what runs each GEMM shape, from an earlier job (study/gemm_plan_file.hpp); empty: tuned
  // (--gemm-tuning).
  GemmPlan gemm_plan;

  // The results group: "large_b32_n2_cuda" (model or widths, global batch, GPU count, device), and "_t2" for trial 2
  // where there are several. Unique in a sweep.
  std::string name(const std::string& device) const;
  // The settings on the agreed back-end, which decides how `step` resolves (apply_step_options; throws UsageError for
  // what the CPU fallback cannot do), with what depends on the GPU count: overlap and grad_dtype only with > 1 GPU
  // (--overlap auto: overlap_by_default), fused_optimizer only with 1 (--fuse-optimizer auto:
  // fused_optimizer_by_default).
  TrainingSettings training_settings(bool cuda_backend) const;
};

// "large_b32_n2_cuda" for "large_b32_n2_cuda_t3" (BenchConfiguration::name): the configuration a trial belongs to.
std::string without_trial(const std::string& configuration_name);

// Every configuration of the grid, model by model, batch by batch, each batch trial by trial on every GPU count in the
// order given (so the 1- and 2-GPU runs of a batch's trial are neighbours in time). Throws UsageError
// (validate_for_ranks) when a GPU count exceeds the job or does not divide a batch.
std::vector<BenchConfiguration> plan_sweep(const BenchOptions& options, int job_ranks);

// The trials of a job whose --trials was left out (a given one is kept): with --resume, `resumed_trials` (those the
// file holds; 0 when there is no file yet, which the job starts as a new one); on GPUs, auto wherever a batch runs on 1
// GPU and on more, because there each process tunes its own GEMM plan and processes differ more than the runs inside
// one (docs/statistics.md, "Trials"); else one trial, as on the CPU fallback, which tunes nothing, and where no speedup
// is measured.
BenchOptions with_default_trials(const BenchOptions& given, bool on_gpus, int job_ranks, int resumed_trials);

}  // namespace mgpu
