// Purpose: series_name and trials_merged (series.hpp).
#include "series.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <utility>

namespace mgpu::analysis {

std::string series_name(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  std::string model = m.training().model.name;
  if (model == "custom") {
    model += " ";
    for (std::size_t i = 0; i < m.training().model.widths.size(); ++i)
      model += (i > 0 ? "," : "") + std::to_string(m.training().model.widths[i]);
  }
  // The label is the group name plus the non-default settings; the name itself carries the batch, which a curve
  // over batch must not.
  const std::string settings = s.label.substr(std::min(s.label.size(), m.name.size()));
  const int ranks = s.results->ranks();
  return model + " " + std::to_string(ranks) + (ranks == 1 ? " GPU" : " GPUs") + settings;
}

std::vector<std::vector<const stats::ConfigurationStats*>> trial_groups(
    const std::vector<stats::ConfigurationStats>& configurations) {
  std::vector<std::pair<std::string, long long>> order;
  std::map<std::pair<std::string, long long>, std::vector<const stats::ConfigurationStats*>> trials;
  for (const stats::ConfigurationStats& s : configurations) {
    const std::pair<std::string, long long> key{series_name(s), s.results->metadata.global_batch()};
    if (trials[key].empty()) order.push_back(key);
    trials[key].push_back(&s);
  }
  std::vector<std::vector<const stats::ConfigurationStats*>> groups;
  for (const auto& key : order) groups.push_back(trials[key]);
  return groups;
}

std::vector<stats::ConfigurationStats> trials_merged(const std::vector<stats::ConfigurationStats>& configurations) {
  static const std::regex trial_suffix("_t[0-9]+( |$)");
  std::vector<stats::ConfigurationStats> bars;
  for (const std::vector<const stats::ConfigurationStats*>& group : trial_groups(configurations)) {
    stats::ConfigurationStats bar = *group.front();
    if (group.size() >= 2) {
      const double count = static_cast<double>(group.size());
      for (std::size_t p = 0; p < bar.phase_ms.size(); ++p) {
        double sum = 0;
        for (const stats::ConfigurationStats* s : group) sum += s->phase_ms[p];
        bar.phase_ms[p] = sum / count;
      }
      double step = 0;
      for (const stats::ConfigurationStats* s : group) step += s->mean_step_ms;
      bar.mean_step_ms = step / count;
      bar.label = std::regex_replace(bar.label, trial_suffix, "$1") + " (" + std::to_string(group.size()) + " trials)";
    }
    bars.push_back(std::move(bar));
  }
  return bars;
}

}  // namespace mgpu::analysis
