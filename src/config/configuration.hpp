// Purpose: one configuration of a job, resolved: its step (TrainingSettings: model, global batch, steps, runs, seed
// and every step setting), its GPU count, NCCL's algorithm and protocol, trial and stopping rules, and its name.
// plan_sweep makes them once; every later stage reads them as given.
#pragma once

#include <string>

#include "config/step_settings.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// NCCL_ALGO's or NCCL_PROTO's recorded value where the variable is unset: NCCL chooses.
inline constexpr char kNcclDefault[] = "default";

struct Configuration {
  TrainingSettings training;     // runs: every run (--timing interleaved: its marked runs included)
  int gpus = 1;                  // runs on ranks 0..gpus-1 of the job, through communicators of their own
  int runs_requested = 50;       // what --runs said: the runs throughput is computed from
  double max_noise_percent = 0;  // --max-noise (0 = off)
  double max_time_seconds = 0;   // --max-time (0 = no limit)
  int trial = 1;                 // which trial of the configuration this is (1 to trials)
  int trials = 1;                // --trials
  // NCCL_ALGO and NCCL_PROTO in effect for the configuration's communicator, in NCCL's spelling ("Tree", "^NVLS"):
  // --nccl-algo / --nccl-proto, else the environment's.
  std::string nccl_algo = kNcclDefault;
  std::string nccl_proto = kNcclDefault;

  const MlpSpec& model() const { return training.model; }
  int global_batch() const { return training.global_batch; }
  int runs() const { return training.runs; }
  // The results group: "large_b32_n2_cuda" (model or widths, global batch, GPU count, device), and "_t2" for trial 2
  // where there are several. Unique in a sweep.
  std::string name(const std::string& device) const;
};

// The runs a configuration that asked for `runs_requested` runs makes with `timing` (interleaved adds marked ones).
inline int runs_made(int runs_requested, TimingMode timing) {
  return timing == TimingMode::interleaved ? interleaved_run_count(runs_requested) : runs_requested;
}

// "large_b32_n2": the model (preset name, or the widths of any other MLP), global batch and GPU count; the default
// output file name and the results group name are built on it.
std::string configuration_stem(const MlpSpec& model, int global_batch, int gpus);

// "large_b32_n2_cuda" for "large_b32_n2_cuda_t3" (Configuration::name): the configuration a trial belongs to.
std::string without_trial(const std::string& configuration_name);

}  // namespace mgpu
