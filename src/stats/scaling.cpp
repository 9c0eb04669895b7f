// Purpose: pairs N-GPU configurations with their 1-GPU baselines.
#include "stats/scaling.hpp"

#include <map>
#include <string>

#include "results/results_schema.hpp"
#include "stats/pairing_identity.hpp"

namespace mgpu::stats {

ScalingTable build_scaling_table(const std::vector<ConfigurationStats>& configurations) {
  ScalingTable table;
  std::map<std::vector<std::string>, const ConfigurationStats*> baselines;
  std::vector<const ConfigurationStats*> checked;
  for (const ConfigurationStats& c : configurations) {
    if (results_schema::replica_verdict(c.results->progress.replica_check) == results_schema::ReplicaVerdict::differ)
      table.replicas_differ.push_back(&c);
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

}  // namespace mgpu::stats
