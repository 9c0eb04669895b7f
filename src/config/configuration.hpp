// Purpose: one configuration of a job, resolved: its step (TrainingSettings: model, global batch, steps, runs, seed
// and every step setting), its GPU count, trial and stopping rules, and its name. plan_sweep makes them once; every
// later stage reads them as given.
#pragma once

#include <string>

#include "config/step_settings.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

struct Configuration {
  TrainingSettings training;     // runs: every run (--timing interleaved: its marked runs included)
  int gpus = 1;                  // runs on ranks 0..gpus-1 of the job, through communicators of their own
  int runs_requested = 50;       // what --runs said: the runs throughput is computed from
  double max_noise_percent = 0;  // --max-noise (0 = off)
  double max_time_seconds = 0;   // --max-time (0 = no limit)
  int trial = 1;                 // which trial of the configuration this is (1 to trials)
  int trials = 1;                // --trials

  const MlpSpec& model() const { return training.model; }
  int global_batch() const { return training.global_batch; }
  int runs() const { return training.runs; }
  // The results group: "large_b32_n2_cuda" (model or widths, global batch, GPU count, device), and "_t2" for trial 2
  // where there are several. Unique in a sweep.
  std::string name(const std::string& device) const;
};

// Every setting of a configuration that its results group records as one attribute of the same name, visited by that
// name with the setting itself (C: Configuration, const or not). The results writer and reader walk this list
// (results/configuration_record.hpp), so a setting added here is written, read back and round-trip tested without
// another edit there. What is recorded in another shape (the model, the local batch, what exists only with overlap
// on, GEMM tuning on the CPU) is mapped by hand in configuration_record.cpp.
template <typename C, typename Visit>
void for_each_recorded_setting(C& c, Visit&& visit) {
  visit("global_batch", c.training.global_batch);
  visit("ranks", c.gpus);
  visit("trial", c.trial);
  visit("precision", c.training.precision);
  visit("graph", c.training.graph);
  visit("overlap", c.training.overlap);
  visit("fused_optimizer", c.training.fused_optimizer);
  visit("optimizer_sharding", c.training.optimizer_sharding);
  visit("grad_dtype", c.training.grad_dtype);
  visit("accumulate_steps", c.training.accumulate_steps);
  visit("timing", c.training.timing);
  visit("warmup_steps", c.training.warmup_steps);
  visit("measured_steps", c.training.measured_steps);
  visit("runs_requested", c.runs_requested);
  visit("seed", c.training.seed);
  visit("adam_learning_rate", c.training.adam.learning_rate);
  visit("adam_beta1", c.training.adam.beta1);
  visit("adam_beta2", c.training.adam.beta2);
  visit("adam_epsilon", c.training.adam.epsilon);
}

// "large_b32_n2": the model (preset name, or the widths of any other MLP), global batch and GPU count; the default
// output file name and the results group name are built on it.
std::string configuration_stem(const MlpSpec& model, int global_batch, int gpus);

// "large_b32_n2_cuda" for "large_b32_n2_cuda_t3" (Configuration::name): the configuration a trial belongs to.
std::string without_trial(const std::string& configuration_name);

}  // namespace mgpu
