// Purpose: expanding the command line's grid into configurations.
#include "study/sweep_plan.hpp"

#include <regex>

#include "stats/step_model.hpp"

namespace mgpu {

std::string BenchConfiguration::name(const std::string& device) const {
  return configuration_stem(model, global_batch, gpus) + "_" + device +
         (trials > 1 ? "_t" + std::to_string(trial) : std::string());
}

TrainingSettings BenchConfiguration::training_settings(bool cuda_backend) const {
  TrainingSettings settings;
  settings.model = model;
  settings.global_batch = global_batch;
  settings.warmup_steps = warmup_steps;
  settings.measured_steps = measured_steps;
  settings.seed = seed;
  settings.runs = runs;
  apply_step_options(step, cuda_backend, settings);
  // One rank has nothing to reduce, so nothing to overlap or shard and no reduction dtype: recorded as off / fp32.
  // --overlap auto takes it where overlap_by_default says, in the order that was measured (deferred), and never
  // with the sharded optimizer, which reduce-scatters after backward.
  const bool overlap_chosen_by_auto =
      step.overlap == Toggle::automatic && step.overlap_order == WeightGradientOrder::deferred &&
      step.optimizer_sharding != Toggle::on && stats::overlap_by_default(gpus, global_batch / gpus);
  settings.overlap = cuda_backend && gpus > 1 && (settings.overlap || overlap_chosen_by_auto);
  settings.optimizer_sharding = settings.optimizer_sharding && gpus > 1;
  if (gpus == 1) settings.grad_dtype = GradDtype::fp32;
  // --fuse-optimizer, resolved here and only here: weight gradient + Adam in one kernel needs the whole gradient on
  // this GPU (nothing to all-reduce between the two) and fp32; auto takes it where fused_optimizer_by_default says.
  // With more than one GPU it is recorded as off.
  const bool fused_requested =
      step.fuse_optimizer == Toggle::on ||
      (step.fuse_optimizer == Toggle::automatic &&
       stats::fused_optimizer_by_default(gpus, step.precision == Precision::fp32, global_batch / gpus));
  settings.fused_optimizer = cuda_backend && gpus == 1 && step.precision == Precision::fp32 && fused_requested;
  if (cuda_backend && !gemm_plan.empty()) {
    settings.gemm_tuning = GemmTuning::plan;
    settings.gemm_plan = gemm_plan;
  }
  return settings;
}

std::string without_trial(const std::string& configuration_name) {
  static const std::regex trial_suffix("_t[0-9]+$");
  return std::regex_replace(configuration_name, trial_suffix, "");
}

std::vector<BenchConfiguration> plan_sweep(const BenchOptions& options, int job_ranks) {
  validate_for_ranks(options, job_ranks);
  const std::vector<int> gpu_counts = options.gpu_counts(job_ranks);
  std::vector<BenchConfiguration> plan;
  for (const SweepEntry& entry : options.sweep) {
    for (int batch : entry.global_batches) {
      for (int trial = 1; trial <= options.trials; ++trial) {
        for (int gpus : gpu_counts) {
          BenchConfiguration configuration;
          configuration.model = entry.model;
          configuration.global_batch = batch;
          configuration.gpus = gpus;
          configuration.warmup_steps = options.warmup_steps;
          configuration.measured_steps = options.measured_steps;
          // --runs counts the runs throughput is computed from; interleaved timing adds its phase-marked runs.
          configuration.runs =
              options.step.timing == TimingMode::interleaved ? interleaved_run_count(options.runs) : options.runs;
          configuration.runs_requested = options.runs;
          configuration.max_noise_percent = options.max_noise_percent;
          configuration.max_time_seconds = options.max_time_seconds;
          configuration.seed = options.seed;
          configuration.step = options.step;
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
