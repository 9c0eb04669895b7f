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

// Every setting of a configuration that its results group records, visited as visit(name, setting, applies): the
// attribute's name, the setting itself, and whether it means anything in this configuration (what exists only with
// overlap on does not without it). The results writer and reader walk this list (results_schema.hpp), so a setting
// added here is written, read back and round-trip tested without another edit there but its role row. C:
// Configuration, const or not.
template <typename C, typename Visit>
void for_each_recorded_setting(C& c, Visit&& visit) {
  auto& t = c.training;
  visit("model", t.model.name, true);
  visit("layer_widths", t.model.widths, true);
  visit("dropout", t.model.dropout, true);
  visit("global_batch", t.global_batch, true);
  visit("ranks", c.gpus, true);
  visit("trial", c.trial, true);
  visit("precision", t.precision, true);
  visit("graph", t.graph, true);
  visit("overlap", t.overlap, true);
  visit("overlap_order", t.overlap_order, t.overlap);
  visit("bucket_mb", t.bucket_mb, t.overlap);
  visit("overlap_update", t.overlap_update, t.overlap);
  visit("fused_optimizer", t.fused_optimizer, true);
  visit("optimizer_sharding", t.optimizer_sharding, true);
  visit("grad_dtype", t.grad_dtype, true);
  visit("accumulate_steps", t.accumulate_steps, true);
  visit("timing", t.timing, true);
  visit("warmup_steps", t.warmup_steps, true);
  visit("measured_steps", t.measured_steps, true);
  visit("runs_requested", c.runs_requested, true);
  visit("seed", t.seed, true);
  visit("adam_learning_rate", t.adam.learning_rate, true);
  visit("adam_beta1", t.adam.beta1, true);
  visit("adam_beta2", t.adam.beta2, true);
  visit("adam_epsilon", t.adam.epsilon, true);
}

// The runs a configuration that asked for `runs_requested` runs makes with `timing` (interleaved adds marked ones).
inline int runs_made(int runs_requested, TimingMode timing) {
  return timing == TimingMode::interleaved ? interleaved_run_count(runs_requested) : runs_requested;
}

// Whether recorded setting `name` means something only with overlap on (for_each_recorded_setting's applies):
// overlap_order, bucket_mb, overlap_update.
bool applies_only_with_overlap(const std::string& name);

// "large_b32_n2": the model (preset name, or the widths of any other MLP), global batch and GPU count; the default
// output file name and the results group name are built on it.
std::string configuration_stem(const MlpSpec& model, int global_batch, int gpus);

// "large_b32_n2_cuda" for "large_b32_n2_cuda_t3" (Configuration::name): the configuration a trial belongs to.
std::string without_trial(const std::string& configuration_name);

}  // namespace mgpu
