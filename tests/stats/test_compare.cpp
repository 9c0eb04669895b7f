// Purpose: compare (compare.hpp): the verdict rule (Welch's p against alpha AND the minimum effect), pairing by the
// full identity including GPUs and NCCL settings (or without NCCL settings on request), and configurations found on
// one side only listed, not dropped.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <map>

#include "stats/compare.hpp"
#include "stats/pairing_identity.hpp"

using namespace mgpu;
using namespace mgpu::stats;

namespace {

struct Side {
  std::deque<ConfigurationResults> results;
  std::vector<ConfigurationStats> stats;
  void add(const std::string& name, int ranks, const std::string& algo, std::vector<double> throughput,
           const std::map<std::string, std::string>& changes = {}) {
    ConfigurationResults& c = results.emplace_back();
    c.metadata.name = name;
    c.metadata.configuration.gpus = ranks;
    c.attribute_text = {{"model", "medium"},
                        {"global_batch", "32"},
                        {"ranks", std::to_string(ranks)},
                        {"nccl_algo", algo},
                        {"nccl_proto", "default"}};
    for (const auto& [key, value] : changes) c.attribute_text[key] = value;
    ConfigurationStats s;
    s.label = configuration_label(c);
    s.results = &c;
    s.kept_throughput = throughput;
    s.throughput = summarize_sample(throughput);
    stats.push_back(s);
  }
};

WelchTest significant() {
  WelchTest w;
  w.valid = true;
  w.p = 0.001;
  return w;
}

TEST(Verdict, NeedsSignificanceAndTheMinimumEffect) {
  const CompareOptions options;  // alpha 0.05, min effect 2%
  EXPECT_STREQ(verdict_name(decide_verdict(1.05, significant(), options)), "FASTER");
  EXPECT_STREQ(verdict_name(decide_verdict(0.95, significant(), options)), "SLOWER");
  EXPECT_STREQ(verdict_name(decide_verdict(1.01, significant(), options)), "SAME");  // significant but below 2%
  WelchTest noisy = significant();
  noisy.p = 0.2;
  EXPECT_STREQ(verdict_name(decide_verdict(1.30, noisy, options)), "SAME");  // large but not significant
  EXPECT_STREQ(verdict_name(decide_verdict(1.30, WelchTest{}, options)), "n/a");
  CompareOptions strict;
  strict.alpha = 0.0001;
  EXPECT_STREQ(verdict_name(decide_verdict(1.05, significant(), strict)), "SAME");
}

// The convention at the edges (docs/statistics.md, compare.hpp): p == alpha is not significant (significance is
// p < alpha), and a change of exactly the minimum effect counts (|ratio - 1| >= min_effect). Values exact in binary.
TEST(Verdict, PEqualToAlphaIsNotSignificant) {
  CompareOptions options;
  options.alpha = 0.25;
  options.min_effect = 0.5;
  WelchTest at_alpha = significant();
  at_alpha.p = 0.25;
  EXPECT_STREQ(verdict_name(decide_verdict(2.0, at_alpha, options)), "SAME");
  EXPECT_STREQ(verdict_name(decide_verdict(0.25, at_alpha, options)), "SAME");
  WelchTest just_below = at_alpha;
  just_below.p = std::nextafter(0.25, 0.0);
  EXPECT_STREQ(verdict_name(decide_verdict(2.0, just_below, options)), "FASTER");
  EXPECT_STREQ(verdict_name(decide_verdict(0.25, just_below, options)), "SLOWER");
}

TEST(Verdict, AChangeOfExactlyTheMinimumEffectCounts) {
  CompareOptions options;
  options.min_effect = 0.5;
  EXPECT_STREQ(verdict_name(decide_verdict(1.5, significant(), options)), "FASTER");  // 1.5 - 1 == 0.5
  EXPECT_STREQ(verdict_name(decide_verdict(0.5, significant(), options)), "SLOWER");  // 1 - 0.5 == 0.5
  EXPECT_STREQ(verdict_name(decide_verdict(std::nextafter(1.5, 1.0), significant(), options)), "SAME");
  EXPECT_STREQ(verdict_name(decide_verdict(std::nextafter(0.5, 1.0), significant(), options)), "SAME");
}

TEST(Compare, PairsByFullIdentityAndListsOneSidedConfigurations) {
  Side before, after;
  before.add("n1", 1, "default", {100, 101, 99, 100, 100});
  before.add("n2", 2, "default", {180, 181, 179, 180, 180});
  before.add("gone", 2, "Ring", {10, 11, 9, 10, 10});
  after.add("n1", 1, "default", {110, 111, 109, 110, 110});
  after.add("n2", 2, "default", {180, 181, 179, 180, 180.5});
  after.add("new", 2, "Tree", {10, 11, 9, 10, 10});
  const Comparison c = compare_results(before.stats, after.stats, {});
  ASSERT_EQ(c.pairs.size(), 2u);
  EXPECT_NEAR(c.pairs[0].ratio.ratio, 1.1, 1e-12);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::faster);
  EXPECT_TRUE(c.pairs[0].ratio.has_interval);
  EXPECT_GT(c.pairs[0].ratio.low, 1.0);
  EXPECT_EQ(c.pairs[1].verdict, Verdict::same);
  ASSERT_EQ(c.only_before.size(), 1u);
  EXPECT_EQ(c.only_before[0]->label, "gone nccl Ring/default");
  ASSERT_EQ(c.only_after.size(), 1u);
  EXPECT_EQ(c.only_after[0]->label, "new nccl Tree/default");
}

TEST(Compare, IgnoringNcclSettingsPairsDifferentAlgorithms) {
  Side before, after;
  before.add("ring", 2, "Ring", {100, 101, 99, 100, 100});
  after.add("tree", 2, "Tree", {90, 91, 89, 90, 90});
  EXPECT_TRUE(compare_results(before.stats, after.stats, {}).pairs.empty());
  CompareOptions options;
  options.match_nccl_settings = false;
  const Comparison c = compare_results(before.stats, after.stats, options);
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::slower);
}

TEST(Compare, FusedOptimizerOnAndOffDoNotPair) {
  // A version-3 file lacks fused_optimizer and means off: it pairs with an explicit off, never with on.
  Side before, after;
  before.add("n1_v3", 1, "default", {100, 101, 99, 100, 100});
  after.add("n1_off", 1, "default", {100, 101, 99, 100, 100}, {{"fused_optimizer", "off"}});
  EXPECT_EQ(compare_results(before.stats, after.stats, {}).pairs.size(), 1u);
  Side fused;
  fused.add("n1_fused", 1, "default", {120, 121, 119, 120, 120}, {{"fused_optimizer", "on"}});
  const Comparison c = compare_results(before.stats, fused.stats, {});
  EXPECT_TRUE(c.pairs.empty());
  ASSERT_EQ(c.only_after.size(), 1u);
  EXPECT_EQ(c.only_after[0]->label, "n1_fused fused_optimizer=on");
}

// Files with trials: each side's trials of a configuration are compared by their means, one row; each trial's runs
// alone would call every change significant. A side with one configuration is paired as before trials existed.
TEST(Compare, TrialsAreComparedByTheirMeans) {
  Side before, after;
  for (const double mean : {100.0, 104.0, 96.0})
    before.add("b", 2, "default", {mean, mean + 0.1, mean - 0.1, mean, mean});
  for (const double mean : {103.0, 99.0}) after.add("a", 2, "default", {mean, mean + 0.1, mean - 0.1, mean, mean});
  const Comparison c = compare_results(before.stats, after.stats, {});
  ASSERT_EQ(c.pairs.size(), 1u);
  const ComparedPair& pair = c.pairs[0];
  EXPECT_TRUE(pair.in_trials());
  EXPECT_EQ(pair.before_trials, 3u);
  EXPECT_EQ(pair.after_trials, 2u);
  EXPECT_DOUBLE_EQ(pair.ratio.ratio, 101.0 / 100.0);
  EXPECT_DOUBLE_EQ(pair.before_throughput.mean, 100.0);
  ASSERT_TRUE(pair.ratio.has_interval);
  EXPECT_LT(pair.ratio.low, 1.0);
  EXPECT_TRUE(pair.welch.valid);
  EXPECT_GT(pair.welch.p, 0.5);
  EXPECT_EQ(pair.verdict, Verdict::same);
  EXPECT_TRUE(c.only_before.empty());
  EXPECT_TRUE(c.only_after.empty());
  // Two trials are enough on either side.
  const Comparison reversed = compare_results(after.stats, before.stats, {});
  ASSERT_EQ(reversed.pairs.size(), 1u);
  EXPECT_EQ(reversed.pairs[0].before_trials, 2u);
  EXPECT_TRUE(reversed.pairs[0].in_trials());
  EXPECT_DOUBLE_EQ(reversed.pairs[0].ratio.ratio, 100.0 / 101.0);
  // Three trials before, one configuration after: the first before is compared, the other two listed.
  Side once;
  once.add("a", 2, "default", {103, 103.1, 102.9, 103, 103});
  const Comparison single = compare_results(before.stats, once.stats, {});
  ASSERT_EQ(single.pairs.size(), 1u);
  EXPECT_FALSE(single.pairs[0].in_trials());
  EXPECT_DOUBLE_EQ(single.pairs[0].ratio.ratio, 103.0 / 100.0);
  EXPECT_EQ(single.only_before.size(), 2u);
}

}  // namespace
