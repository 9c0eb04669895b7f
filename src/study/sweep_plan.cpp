// Purpose: expanding the command line's grid into resolved configurations.
#include "study/sweep_plan.hpp"

#include "config/resolver.hpp"

namespace mgpu {

std::vector<Configuration> plan_sweep(const BenchOptions& options, int job_ranks, bool cuda_backend) {
  const std::vector<int> gpu_counts = options.gpu_counts(job_ranks);
  std::vector<Configuration> plan;
  for (const SweepEntry& entry : options.sweep) {
    for (int batch : entry.global_batches) {
      for (int trial = 1; trial <= options.trials; ++trial) {
        for (int gpus : gpu_counts) {
          Configuration configuration = options.settings;  // every setting an option gave, the grid's below
          TrainingSettings& training = configuration.training;
          training.model = entry.model;
          training.global_batch = batch;
          // --runs counts the runs throughput is computed from; interleaved timing adds its phase-marked runs.
          training.runs = runs_made(configuration.runs_requested, options.step.timing);
          resolve_step(options.step, cuda_backend, gpus, training);
          configuration.gpus = gpus;
          configuration.max_noise_percent = options.max_noise_percent;
          configuration.max_time_seconds = options.max_time_seconds;
          configuration.trial = trial;
          configuration.trials = options.trials;
          plan.push_back(std::move(configuration));
        }
      }
    }
  }
  return plan;
}

BenchOptions with_default_trials(const BenchOptions& given, bool on_gpus, int job_ranks, int resumed_trials) {
  BenchOptions options = given;
  if (given.trials_given) return options;
  if (given.resume && resumed_trials > 0) {
    options.trials = resumed_trials;
  } else if (on_gpus && given.gpu_counts(job_ranks).size() > 1) {
    options.adaptive_trials = true;
    options.trials = kMaxAutoTrials;
  }
  return options;
}

}  // namespace mgpu
