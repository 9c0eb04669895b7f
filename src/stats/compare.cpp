// Purpose: pairs before with after and judges each pair's ratio by the answer's interval rule (compare.hpp).
#include "stats/compare.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "config/settings_table.hpp"
#include "stats/pairing_identity.hpp"
#include "stats/scaling.hpp"
#include "stats/speedup_verdict.hpp"

namespace mgpu::stats {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::same:
      return "SAME";
    case Verdict::faster:
      return "FASTER";
    case Verdict::slower:
      return "SLOWER";
    case Verdict::unclear:
      return "UNCLEAR";
    case Verdict::none:
      break;
  }
  return "n/a";
}

Verdict decide_verdict(const RatioInterval& ratio, const CompareOptions& options) {
  switch (speedup_verdict(ratio, options.min_effect)) {
    case SpeedupVerdict::faster:
      return Verdict::faster;
    case SpeedupVerdict::slower:
      return Verdict::slower;
    case SpeedupVerdict::no_significant_difference:
      return Verdict::same;
    case SpeedupVerdict::no_clear_difference:
      return Verdict::unclear;
    case SpeedupVerdict::no_interval:
      break;
  }
  return Verdict::none;
}

bool is_ignorable_setting(const std::string& name) {
  if (name == kPerBatchSettings) return true;
  const std::vector<IdentityAttribute>& attributes = comparison_identity_attributes();
  return std::any_of(attributes.begin(), attributes.end(),
                     [&](const IdentityAttribute& attribute) { return name == attribute.name; });
}

namespace {

using Group = std::vector<const ConfigurationStats*>;

// Whether the options leave `attribute` out of the pairing.
bool ignored(const IdentityAttribute& attribute, const CompareOptions& options) {
  if (!options.match_nccl_settings && is_nccl_setting(attribute)) return true;
  for (const std::string& name : options.ignored_settings)
    if (name == attribute.name || (name == kPerBatchSettings && decided_per_batch(attribute.name))) return true;
  return false;
}

// The k-th member's mean throughput, for every k.
std::vector<double> trial_means(const Group& trials) {
  std::vector<double> means;
  for (const ConfigurationStats* s : trials) means.push_back(s->throughput.mean);
  return means;
}

ComparedPair compared(const Group& before, const Group& after, const CompareOptions& options) {
  ComparedPair pair;
  pair.before = before.front();
  pair.after = after.front();
  if (before.size() >= 2 && after.size() >= 2) {
    pair.before_trials = before.size();
    pair.after_trials = after.size();
    const std::vector<double> x = trial_means(before), y = trial_means(after);
    pair.before_throughput = summarize_trial_means(x);
    pair.after_throughput = summarize_trial_means(y);
    const SampleSummary& b = pair.before_throughput;
    const SampleSummary& a = pair.after_throughput;
    pair.ratio = fieller_ratio_interval(a.mean, a.sd * a.sd, a.n, b.mean, b.sd * b.sd, b.n, options.confidence, 2);
    pair.welch = welch_test(y, x);
  } else {
    pair.before_throughput = pair.before->throughput;
    pair.after_throughput = pair.after->throughput;
    pair.ratio = fieller_ratio_interval(pair.after_throughput, pair.before_throughput, options.confidence);
    pair.welch = welch_test_of_summaries(pair.after_throughput, pair.before_throughput);
  }
  pair.verdict = decide_verdict(pair.ratio, options);
  return pair;
}

}  // namespace

Comparison compare_results(const std::vector<ConfigurationStats>& before, const std::vector<ConfigurationStats>& after,
                           const CompareOptions& options) {
  Comparison comparison;
  std::vector<IdentityAttribute> attributes;
  for (const IdentityAttribute& attribute : comparison_identity_attributes())
    if (!ignored(attribute, options)) attributes.push_back(attribute);
  // Each side's configurations grouped by identity, the groups in the order of their first member.
  const auto grouped = [&](const std::vector<ConfigurationStats>& side, std::vector<std::vector<std::string>>& order) {
    std::map<std::vector<std::string>, Group> groups;
    for (const ConfigurationStats& c : side) {
      Group& group = groups[identity_key(*c.results, attributes)];
      if (group.empty()) order.push_back(identity_key(*c.results, attributes));
      group.push_back(&c);
    }
    return groups;
  };
  std::vector<std::vector<std::string>> before_order, after_order;
  const auto before_groups = grouped(before, before_order);
  const auto after_groups = grouped(after, after_order);
  std::set<const ConfigurationStats*> used;
  for (const std::vector<std::string>& key : before_order) {
    const Group& b = before_groups.at(key);
    const auto found = after_groups.find(key);
    if (found == after_groups.end()) continue;
    const Group& a = found->second;
    ComparedPair pair = compared(b, a, options);
    if (pair.in_trials()) {
      used.insert(b.begin(), b.end());
      used.insert(a.begin(), a.end());
      comparison.pairs.push_back(pair);
      continue;
    }
    // Several configurations of one identity on a side with one on the other (a repeated measurement): paired in
    // order of appearance, the rest found on one side only.
    for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
      comparison.pairs.push_back(compared({b[k]}, {a[k]}, options));
      used.insert(b[k]);
      used.insert(a[k]);
    }
  }
  // In the order of the before side's configurations, as before trials existed.
  std::map<const ConfigurationStats*, std::size_t> rank;
  for (const ConfigurationStats& b : before) rank[&b] = rank.size();
  std::stable_sort(comparison.pairs.begin(), comparison.pairs.end(),
                   [&](const ComparedPair& x, const ComparedPair& y) { return rank[x.before] < rank[y.before]; });
  for (const ConfigurationStats& b : before)
    if (used.count(&b) == 0) comparison.only_before.push_back(&b);
  for (const ConfigurationStats& a : after)
    if (used.count(&a) == 0) comparison.only_after.push_back(&a);
  return comparison;
}

}  // namespace mgpu::stats
