// Purpose: pairs N-GPU configurations, in trials, with their 1-GPU baselines (scaling.hpp).
#include "stats/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "stats/pairing_identity.hpp"

namespace mgpu::stats {
namespace {

using Group = std::vector<const ConfigurationStats*>;
using Key = std::vector<std::string>;

// Configurations grouped by a key, the groups in the order of their first member.
struct Groups {
  std::map<Key, Group> members;
  std::vector<Key> order;
  void add(const Key& key, const ConfigurationStats* c) {
    Group& group = members[key];
    if (group.empty()) order.push_back(key);
    group.push_back(c);
  }
};

// The figures of trials 1..T of a pair whose sides are already chosen.
void measure(ScalingPair& pair) {
  const std::size_t trials = pair.multis.size();
  std::vector<double> single_means, multi_means;
  std::vector<std::vector<double>> single_runs, multi_runs;
  for (std::size_t k = 0; k < trials; ++k) {
    const SampleSummary& one = pair.singles[k]->throughput;
    const SampleSummary& many = pair.multis[k]->throughput;
    pair.trial_speedups.push_back(fieller_ratio_interval(many, one));
    pair.trial_welch.push_back(welch_test_of_summaries(many, one));
    single_means.push_back(one.mean);
    multi_means.push_back(many.mean);
    single_runs.push_back(pair.singles[k]->kept_throughput);
    multi_runs.push_back(pair.multis[k]->kept_throughput);
  }
  if (pair.in_trials()) {
    pair.speedup = paired_trial_ratio_interval(multi_means, single_means);
    pair.single_throughput = summarize_trial_means(single_means);
    pair.multi_throughput = summarize_trial_means(multi_means);
    pair.single_components = variance_components(single_runs);
    pair.multi_components = variance_components(multi_runs);
  } else {
    pair.speedup = pair.trial_speedups.front();
    pair.welch = pair.trial_welch.front();
    pair.single_throughput = pair.single().throughput;
    pair.multi_throughput = pair.multi().throughput;
  }
  pair.efficiency = pair.speedup.ratio / pair.gpus();
}

RatioInterval scaled(RatioInterval r, double factor) {
  r.ratio *= factor;
  r.low *= factor;
  r.high *= factor;
  return r;
}

// The ceiling and the fraction of it reached, at the pair's level: over the trial means, paired by trial, or over the
// runs of a pair measured once.
void measure_ceiling(ScalingPair& pair) {
  const double gpus = pair.gpus();
  if (!pair.in_trials()) {
    const SampleSummary& local = pair.locals.front()->throughput;
    pair.ceiling = scaled(fieller_ratio_interval(local, pair.single().throughput), gpus);
    pair.ceiling_fraction = scaled(fieller_ratio_interval(pair.multi().throughput, local), 1 / gpus);
    return;
  }
  std::vector<double> local_means, single_means, multi_means;
  for (std::size_t k = 0; k < pair.locals.size(); ++k) {
    local_means.push_back(pair.locals[k]->throughput.mean);
    single_means.push_back(pair.singles[k]->throughput.mean);
    multi_means.push_back(pair.multis[k]->throughput.mean);
  }
  pair.ceiling = scaled(paired_trial_ratio_interval(local_means, single_means), gpus);
  pair.ceiling_fraction = scaled(paired_trial_ratio_interval(multi_means, local_means), 1 / gpus);
}

// The scaling identity without the global batch: 1-GPU configurations that differ only in their batch.
Key batchless_key(const ConfigurationResults& c) {
  Key key = identity_key(c, without_global_batch(scaling_identity_attributes()));
  key.push_back(std::to_string(c.metadata.global_batch()));
  return key;
}

// Trial k's 1-GPU configuration at the pair's local batch, from the baselines' trials (`baselines`: the batchless key
// and batch of each baseline group, to its trials).
void attach_locals(ScalingPair& pair, const std::map<Key, const Group*>& baselines) {
  const long long batch = pair.multi().results->metadata.global_batch();
  const int gpus = pair.gpus();
  if (batch % gpus != 0) return;
  Key key = batchless_key(*pair.single().results);
  key.back() = std::to_string(batch / gpus);
  const auto found = baselines.find(key);
  if (found == baselines.end()) return;
  const Group& local = *found->second;
  const std::size_t trials = std::min(local.size(), pair.trials());
  if (pair.in_trials() && trials < 2) return;
  pair.locals.assign(local.begin(), local.begin() + (pair.in_trials() ? trials : 1));
}

}  // namespace

SampleSummary summarize_trial_means(const std::vector<double>& trial_means) {
  SampleSummary s = summarize_sample(trial_means);
  s.has_interval = trial_means.size() >= 2;
  s.half_width = s.has_interval ? student_t_quantile(1 - (1 - kConfidence) / 2, double(trial_means.size() - 1)) * s.sd /
                                      std::sqrt(double(trial_means.size()))
                                : 0;
  return s;
}

ScalingTable build_scaling_table(const std::vector<ConfigurationStats>& configurations) {
  ScalingTable table;
  // 1-GPU groups by every compared setting (their trials), the first of each scaling identity its baseline; N-GPU
  // groups by every compared setting and the GPU count.
  Groups singles, multis;
  std::map<Key, Key> baseline_of;  // scaling identity -> the compared identity of its baseline group
  for (const ConfigurationStats& c : configurations) {
    if (!c.wrong_step().empty()) {
      table.wrong_steps.push_back(&c);
      continue;
    }
    Key compared = identity_key(*c.results, comparison_identity_attributes());
    if (c.results->ranks() == 1) {
      baseline_of.emplace(identity_key(*c.results, scaling_identity_attributes()), compared);
      singles.add(compared, &c);
    } else {
      multis.add(compared, &c);
    }
  }
  std::map<Key, const Group*> baselines;  // by batchless key and batch: the local-batch baselines of the ceilings
  for (const Key& key : singles.order) {
    const Group& group = singles.members[key];
    if (baseline_of.at(identity_key(*group.front()->results, scaling_identity_attributes())) != key)
      table.duplicate_baselines.insert(table.duplicate_baselines.end(), group.begin(), group.end());
    else
      baselines.emplace(batchless_key(*group.front()->results), &group);
  }
  std::map<Key, std::size_t> singles_used;
  for (const Key& key : multis.order) {
    const Group& multi = multis.members[key];
    const auto baseline = baseline_of.find(identity_key(*multi.front()->results, scaling_identity_attributes()));
    if (baseline == baseline_of.end()) {
      table.without_baseline.insert(table.without_baseline.end(), multi.begin(), multi.end());
      continue;
    }
    const Group& single = singles.members[baseline->second];
    const std::size_t trials = std::min(single.size(), multi.size());
    ScalingPair pair;
    pair.singles.assign(single.begin(), single.begin() + trials);
    pair.multis.assign(multi.begin(), multi.begin() + trials);
    table.unmatched_trials.insert(table.unmatched_trials.end(), multi.begin() + trials, multi.end());
    singles_used[baseline->second] = std::max(singles_used[baseline->second], trials);
    measure(pair);
    attach_locals(pair, baselines);
    if (pair.has_ceiling()) measure_ceiling(pair);
    table.pairs.push_back(std::move(pair));
  }
  for (const auto& [key, used] : singles_used) {
    const Group& single = singles.members[key];
    table.unmatched_trials.insert(table.unmatched_trials.end(), single.begin() + used, single.end());
  }
  return table;
}

}  // namespace mgpu::stats
