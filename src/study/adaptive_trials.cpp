// Purpose: --trials auto's decisions (adaptive_trials.hpp).
#include "study/adaptive_trials.hpp"

#include <cstdio>
#include <string>
#include <utility>

#include "platform/fault_hooks.hpp"
#include "platform/wall_clock.hpp"

namespace mgpu {
namespace {

// Whether two configurations are trials of the same batch: model and global batch.
bool same_batch(const Configuration& a, const Configuration& b) {
  return a.model().widths == b.model().widths && a.model().dropout == b.model().dropout &&
         a.global_batch() == b.global_batch();
}

}  // namespace

AdaptiveTrials::AdaptiveTrials(const BenchOptions& options, const std::vector<Configuration>& plan,
                               std::string results_path, std::string device)
    : enabled_(options.adaptive_trials),
      plan_(plan),
      results_path_(std::move(results_path)),
      device_(std::move(device)),
      stopping_(options.max_noise_percent, options.max_time_seconds),
      steady_trials_(fault_hook("MGPU_FAULT_STEADY_TRIALS") != nullptr) {}

bool AdaptiveTrials::left_out(std::size_t i) const {
  return enabled_ && stopped_ && same_batch(plan_[i], plan_[batch_start_]);
}

void AdaptiveTrials::starting(std::size_t i) {
  if (!enabled_ || (i > 0 && same_batch(plan_[i], plan_[batch_start_]))) return;
  batch_start_ = i;
  stopped_ = false;
  began_ = std::chrono::steady_clock::now();
}

std::vector<ConfigurationResults> AdaptiveTrials::batch_so_far(std::size_t last) const {
  const ResultsFile file = read_results_file(results_path_);
  std::vector<ConfigurationResults> batch;
  for (std::size_t i = batch_start_; i <= last; ++i) {
    batch.push_back(file.configuration(plan_[i].name(device_)));
    if (!steady_trials_) continue;
    // Every trial's runs as its GPU count's first trial's.
    for (const ConfigurationResults& first : batch)
      if (first.ranks() == batch.back().ranks()) {
        batch.back().measurements = first.measurements;
        batch.back().progress.runs_completed = first.progress.runs_completed;
        break;
      }
  }
  return batch;
}

void AdaptiveTrials::finished(std::size_t i, const MpiContext& mpi) {
  if (!enabled_) return;
  const Configuration& configuration = plan_[i];
  const bool ends_trial =
      i + 1 == plan_.size() || !same_batch(plan_[i + 1], configuration) || plan_[i + 1].trial != configuration.trial;
  if (!ends_trial) return;
  const double seconds = seconds_since(began_);
  std::string reason;
  if (mpi.rank == 0) reason = stopping_.stop_reason(configuration.trial, batch_speedups(batch_so_far(i)), seconds);
  stopped_ = allgather_doubles(mpi, reason.empty() ? 0.0 : 1.0).front() != 0;
  if (stopped_ && mpi.rank == 0) {
    std::printf("# trials of %s, global batch %d: %d of at most %d, stopped: %s\n", configuration.model().name.c_str(),
                configuration.global_batch(), configuration.trial, kMaxAutoTrials, reason.c_str());
  }
}

}  // namespace mgpu
