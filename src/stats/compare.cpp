// Purpose: pairs before with after and decides a verdict per configuration.
#include "stats/compare.hpp"

#include <cmath>
#include <map>
#include <set>

#include "stats/pairing_identity.hpp"

namespace mgpu::stats {

const char* verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::same:
      return "SAME";
    case Verdict::faster:
      return "FASTER";
    case Verdict::slower:
      return "SLOWER";
    case Verdict::none:
      break;
  }
  return "n/a";
}

Verdict decide_verdict(double ratio, const WelchTest& welch, const CompareOptions& options) {
  if (!welch.valid) return Verdict::none;
  if (welch.p >= options.alpha || std::fabs(ratio - 1) < options.min_effect) return Verdict::same;
  return ratio > 1 ? Verdict::faster : Verdict::slower;
}

Comparison compare_results(const std::vector<ConfigurationStats>& before, const std::vector<ConfigurationStats>& after,
                           const CompareOptions& options) {
  Comparison comparison;
  // Several configurations of one identity on one side (a repeated measurement): paired in order of appearance.
  std::vector<IdentityAttribute> attributes;
  for (const IdentityAttribute& attribute : comparison_identity_attributes())
    if (options.match_nccl_settings || !is_nccl_setting(attribute)) attributes.push_back(attribute);
  std::multimap<std::vector<std::string>, const ConfigurationStats*> unmatched_after;
  for (const ConfigurationStats& a : after) unmatched_after.emplace(identity_key(*a.results, attributes), &a);
  for (const ConfigurationStats& b : before) {
    const auto found = unmatched_after.find(identity_key(*b.results, attributes));
    if (found == unmatched_after.end()) {
      comparison.only_before.push_back(&b);
      continue;
    }
    ComparedPair pair;
    pair.before = &b;
    pair.after = found->second;
    unmatched_after.erase(found);
    const SampleSummary& x = pair.before->throughput;
    const SampleSummary& y = pair.after->throughput;
    pair.ratio = fieller_ratio_interval(y, x);
    pair.welch = welch_test_of_summaries(y, x);
    pair.verdict = decide_verdict(pair.ratio.ratio, pair.welch, options);
    comparison.pairs.push_back(pair);
  }
  std::set<const ConfigurationStats*> left_after;
  for (const auto& [key, stats] : unmatched_after) left_after.insert(stats);
  for (const ConfigurationStats& a : after)
    if (left_after.count(&a) != 0) comparison.only_after.push_back(&a);
  return comparison;
}

}  // namespace mgpu::stats
