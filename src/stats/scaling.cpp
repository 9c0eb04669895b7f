// Purpose: pairs N-GPU configurations, in trials, with their 1-GPU baselines (scaling.hpp).
#include "stats/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
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

// For each of `left`, in order, its partner from `right`: the next unused one of its own file where its file holds any
// (the same process, its neighbour in time), else the next unused one of the files that hold none of `left`, as given;
// nullptr where none is left. A job's trials pair within the job, several files of one command file by file, and a
// file of N-GPU configurations alone with a baseline file given beside it.
Group match_by_file(const Group& left, const Group& right) {
  std::set<std::string> left_files;
  for (const ConfigurationStats* c : left) left_files.insert(c->file);
  std::map<std::string, std::deque<const ConfigurationStats*>> own;
  std::deque<const ConfigurationStats*> foreign;
  for (const ConfigurationStats* c : right) (left_files.count(c->file) != 0 ? own[c->file] : foreign).push_back(c);
  Group partners;
  for (const ConfigurationStats* c : left) {
    const auto found = own.find(c->file);
    std::deque<const ConfigurationStats*>& pool = found != own.end() ? found->second : foreign;
    partners.push_back(pool.empty() ? nullptr : pool.front());
    if (!pool.empty()) pool.pop_front();
  }
  return partners;
}

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
// and batch of each baseline group, to its trials), matched by file as the sides are: the trials from the first on
// that have one.
void attach_locals(ScalingPair& pair, const std::map<Key, const Group*>& baselines) {
  const long long batch = pair.multi().results->metadata.global_batch();
  const int gpus = pair.gpus();
  if (batch % gpus != 0) return;
  Key key = batchless_key(*pair.single().results);
  key.back() = std::to_string(batch / gpus);
  const auto found = baselines.find(key);
  if (found == baselines.end()) return;
  const Group local = match_by_file(pair.multis, *found->second);
  const std::size_t trials = std::find(local.begin(), local.end(), nullptr) - local.begin();
  if (trials == 0 || (pair.in_trials() && trials < 2)) return;
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
  std::map<Key, std::set<const ConfigurationStats*>> singles_used;  // baseline group -> the trials some pair used
  for (const Key& key : multis.order) {
    const Group& multi = multis.members[key];
    const auto baseline = baseline_of.find(identity_key(*multi.front()->results, scaling_identity_attributes()));
    if (baseline == baseline_of.end()) {
      table.without_baseline.insert(table.without_baseline.end(), multi.begin(), multi.end());
      continue;
    }
    const Group partners = match_by_file(multi, singles.members[baseline->second]);
    std::set<const ConfigurationStats*>& used = singles_used[baseline->second];
    ScalingPair pair;
    for (std::size_t k = 0; k < multi.size(); ++k) {
      if (partners[k] == nullptr) {
        table.unmatched_trials.push_back(multi[k]);
        continue;
      }
      pair.singles.push_back(partners[k]);
      pair.multis.push_back(multi[k]);
      used.insert(partners[k]);
    }
    if (pair.multis.empty()) continue;
    measure(pair);
    attach_locals(pair, baselines);
    if (pair.has_ceiling()) measure_ceiling(pair);
    table.pairs.push_back(std::move(pair));
  }
  for (const auto& [key, used] : singles_used)
    for (const ConfigurationStats* c : singles.members[key])
      if (used.count(c) == 0) table.unmatched_trials.push_back(c);
  return table;
}

}  // namespace mgpu::stats
