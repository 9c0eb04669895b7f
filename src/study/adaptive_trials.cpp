// Purpose: --trials auto's decisions (adaptive_trials.hpp).
#include "study/adaptive_trials.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

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

AdaptiveTrials::AdaptiveTrials(const BenchOptions& options, const std::vector<Configuration>& plan)
    : enabled_(options.adaptive_trials),
      plan_(plan),
      max_noise_percent_(options.max_noise_percent),
      max_time_seconds_(options.max_time_seconds),
      stopping_(max_noise_percent_, max_time_seconds_),
      steady_trials_(fault_hook("MGPU_FAULT_STEADY_TRIALS") != nullptr) {}

bool AdaptiveTrials::left_out(std::size_t i) const {
  return enabled_ && stopped_ && same_batch(plan_[i], plan_[batch_start_]);
}

void AdaptiveTrials::starting(std::size_t i) {
  if (!enabled_ || (i > 0 && same_batch(plan_[i], plan_[batch_start_]))) return;
  batch_start_ = i;
  stopped_ = false;
  stopping_ = TrialStopping(max_noise_percent_, max_time_seconds_);
  first_throughput_.clear();
  began_ = std::chrono::steady_clock::now();
}

void AdaptiveTrials::finished(std::size_t i, const std::vector<RunSummary>& runs, const MpiContext& mpi) {
  if (!enabled_) return;
  const Configuration& configuration = plan_[i];
  double throughput = trial_throughput(runs);
  if (steady_trials_) throughput = first_throughput_.emplace(configuration.gpus, throughput).first->second;
  stopping_.add(configuration.gpus, throughput);
  const bool ends_trial =
      i + 1 == plan_.size() || !same_batch(plan_[i + 1], configuration) || plan_[i + 1].trial != configuration.trial;
  if (!ends_trial) return;
  const double seconds = seconds_since(began_);
  const std::string reason = mpi.rank == 0 ? stopping_.stop_reason(seconds) : std::string();
  stopped_ = allgather_doubles(mpi, reason.empty() ? 0.0 : 1.0).front() != 0;
  if (stopped_ && mpi.rank == 0) {
    std::printf("# trials of %s, global batch %d: %d of at most %d, stopped: %s\n", configuration.model().name.c_str(),
                configuration.global_batch(), stopping_.trials(), kMaxAutoTrials, reason.c_str());
  }
}

}  // namespace mgpu
