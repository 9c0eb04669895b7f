// Purpose: pairs N-GPU configurations with their 1-GPU baselines.
#include "stats/scaling.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "stats/pairing_identity.hpp"

namespace mgpu::stats {

ScalingTable build_scaling_table(const std::vector<ConfigurationStats>& configurations) {
  ScalingTable table;
  std::map<std::vector<std::string>, const ConfigurationStats*> baselines;
  std::vector<const ConfigurationStats*> checked;
  for (const ConfigurationStats& c : configurations) {
    if (!c.wrong_step().empty())
      table.wrong_steps.push_back(&c);
    else
      checked.push_back(&c);
  }
  for (const ConfigurationStats* p : checked) {
    const ConfigurationStats& c = *p;
    if (c.results->ranks() != 1) continue;
    const auto inserted = baselines.emplace(identity_key(*c.results, scaling_identity_attributes()), &c);
    if (!inserted.second) table.duplicate_baselines.push_back(&c);
  }
  for (const ConfigurationStats* p : checked) {
    const ConfigurationStats& c = *p;
    if (c.results->ranks() == 1) continue;
    const auto found = baselines.find(identity_key(*c.results, scaling_identity_attributes()));
    if (found == baselines.end()) {
      table.without_baseline.push_back(&c);
      continue;
    }
    ScalingPair pair;
    pair.single = found->second;
    pair.multi = &c;
    const SampleSummary& one = pair.single->throughput;
    const SampleSummary& many = pair.multi->throughput;
    pair.speedup = fieller_ratio_interval(many, one);
    pair.efficiency = pair.speedup.ratio / c.results->ranks();
    pair.welch = welch_test_of_summaries(many, one);
    table.pairs.push_back(pair);
  }
  return table;
}

std::vector<TrialScalingPair> build_trial_scaling(const std::vector<ConfigurationStats>& configurations) {
  using Group = std::vector<const ConfigurationStats*>;
  std::map<std::vector<std::string>, Group> singles, multis;
  std::vector<std::vector<std::string>> multi_order;
  for (const ConfigurationStats& c : configurations) {
    if (!c.wrong_step().empty()) continue;
    std::vector<std::string> key = identity_key(*c.results, scaling_identity_attributes());
    if (c.results->ranks() == 1) {
      singles[key].push_back(&c);
      continue;
    }
    key.push_back(std::to_string(c.results->ranks()));
    if (multis[key].empty()) multi_order.push_back(key);
    multis[key].push_back(&c);
  }
  std::vector<TrialScalingPair> pairs;
  for (const std::vector<std::string>& key : multi_order) {
    const Group& multi = multis[key];
    const Group& single = singles[std::vector<std::string>(key.begin(), key.end() - 1)];
    const std::size_t trials = std::min(single.size(), multi.size());
    if (trials < 2) continue;
    TrialScalingPair pair;
    pair.singles.assign(single.begin(), single.begin() + trials);
    pair.multis.assign(multi.begin(), multi.begin() + trials);
    std::vector<double> single_means, multi_means;
    std::vector<std::vector<double>> single_runs, multi_runs;
    for (std::size_t k = 0; k < trials; ++k) {
      single_means.push_back(pair.singles[k]->throughput.mean);
      multi_means.push_back(pair.multis[k]->throughput.mean);
      single_runs.push_back(pair.singles[k]->kept_throughput);
      multi_runs.push_back(pair.multis[k]->kept_throughput);
    }
    pair.speedup = paired_trial_ratio_interval(multi_means, single_means);
    pair.single_components = variance_components(single_runs);
    pair.multi_components = variance_components(multi_runs);
    pairs.push_back(std::move(pair));
  }
  return pairs;
}

}  // namespace mgpu::stats
