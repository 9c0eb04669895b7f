// Purpose: compare (compare.hpp): the verdict by the answer's interval rule, the same interval and words as the
// answer's on the same runs, pairing by the full identity including GPUs and NCCL settings (or without NCCL settings
// on request), and configurations found on one side only listed, not dropped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <deque>
#include <filesystem>
#include <map>

#include "analysis/analysis_fixture.hpp"
#include "stats/answer.hpp"
#include "stats/compare.hpp"
#include "stats/pairing_identity.hpp"
#include "stats/ratio_interval_fixture.hpp"

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

// The answer's interval rule (speedup_verdict.hpp, whose test pins its edges) in compare's words, with the band asked
// for.
TEST(Verdict, WhereTheIntervalLies) {
  const CompareOptions options;  // 95%, min effect 2%
  EXPECT_STREQ(verdict_name(decide_verdict(interval(1.03, 1.07), options)), "FASTER");
  EXPECT_STREQ(verdict_name(decide_verdict(interval(0.93, 0.97), options)), "SLOWER");
  EXPECT_STREQ(verdict_name(decide_verdict(interval(0.99, 1.30), options)), "SAME");     // large, but contains 1
  EXPECT_STREQ(verdict_name(decide_verdict(interval(1.01, 1.05), options)), "UNCLEAR");  // excludes 1, not the band
  EXPECT_STREQ(verdict_name(decide_verdict(interval(0.95, 0.99), options)), "UNCLEAR");
  EXPECT_STREQ(verdict_name(decide_verdict(RatioInterval{}, options)), "n/a");
  CompareOptions wide;
  wide.min_effect = 0.1;
  EXPECT_STREQ(verdict_name(decide_verdict(interval(1.03, 1.07), wide)), "UNCLEAR");
}

// compare and the answer judge a ratio by one rule: the same runs (an outlier among them) give compare's after/before
// ratio and the answer's N-GPU/1-GPU speedup the same interval, and compare's verdict says what the answer's sentence
// says, for every place the interval can lie. Over trials the two intervals differ by design (docs/statistics.md,
// "Compare"): the answer's pairs trial k of 1 GPU with trial k of N, which share the machine's state; compare's
// sides are independent jobs. Away from the rule's edges they still say the same.
TEST(Verdict, CompareAgreesWithTheAnswerOnTheSameRuns) {
  using namespace analysis_test;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mgpu_compare_answer_" + std::to_string(::getpid()) + ".h5")).string();
  // The ratio of each case and the answer's words for it: above the band, below it, within it, containing 1.
  const std::vector<std::pair<double, std::string>> cases = {{1.5, "speeds this step up"},
                                                             {0.5, "slows this step down"},
                                                             {1.01, "no clear difference"},
                                                             {1.0, "no significant difference"}};
  const std::map<std::string, Verdict> verdict_of = {{"speeds this step up", Verdict::faster},
                                                     {"slows this step down", Verdict::slower},
                                                     {"no clear difference", Verdict::unclear},
                                                     {"no significant difference", Verdict::same}};
  for (const int trials : {1, 3})
    for (const auto& [ratio, words] : cases) {
      SCOPED_TRACE(std::to_string(ratio) + ", " + std::to_string(trials) + " trials");
      {
        ResultsWriter writer(path, true);
        for (int t = 1; t <= trials; ++t) {
          const std::string suffix = "_t" + std::to_string(t);
          // The same runs as 1-GPU and 2-GPU configurations (for the answer) and as 2-GPU ones before and after.
          const std::vector<double> one = runs_around(1.0 + 0.001 * t, t == 1),
                                    two = runs_around((1.0 + 0.001 * (7 * t % 3)) / ratio);
          add_runs(writer, "one" + suffix, 1, one, t);
          add_runs(writer, "two" + suffix, 2, two, t);
          add_runs(writer, "before" + suffix, 2, one, t);
          add_runs(writer, "after" + suffix, 2, two, t);
        }
        writer.close();
      }
      const ResultsFile file = read_results_file(path);
      std::vector<ConfigurationStats> answered, before, after;
      for (const ConfigurationResults& c : file.configurations) {
        const std::string& name = c.metadata.name;
        auto& side = name.rfind("before", 0) == 0 ? before : name.rfind("after", 0) == 0 ? after : answered;
        side.push_back(compute_configuration_stats(c, path, {}));
      }
      EXPECT_EQ(before.front().runs_kept, 5);  // the outlier screened out
      const Answer answer = compute_answer(answered);
      const Comparison comparison = compare_results(before, after, {});
      ASSERT_EQ(answer.pairs.size(), 1u);
      ASSERT_EQ(comparison.pairs.size(), 1u);
      const RatioInterval& speedup = answer.pairs[0].pair.speedup;
      const ComparedPair& compared = comparison.pairs[0];
      EXPECT_EQ(compared.in_trials(), trials > 1);
      EXPECT_DOUBLE_EQ(compared.ratio.ratio, speedup.ratio);
      if (trials == 1) {
        EXPECT_DOUBLE_EQ(compared.ratio.low, speedup.low);
        EXPECT_DOUBLE_EQ(compared.ratio.high, speedup.high);
      }
      EXPECT_NE(answer.pairs[0].sentence.find(words), std::string::npos) << answer.pairs[0].sentence;
      EXPECT_EQ(compared.verdict, verdict_of.at(words)) << verdict_name(compared.verdict);
    }
  std::filesystem::remove(path);
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

// --ignore-setting: a named attribute leaves the pairing (tf32x3 against the fp32 it replaces); per-batch, every
// setting --X auto decides per batch (a new build's fused optimizer at a batch where the old one's was off); a name
// compare does not pair on is refused by is_ignorable_setting.
TEST(Compare, IgnoredSettingsPairAcrossThem) {
  Side before, after;
  before.add("b", 1, "default", {100, 101, 99, 100, 100}, {{"precision", "fp32"}, {"fused_optimizer", "off"}});
  after.add("a", 1, "default", {150, 151, 149, 150, 150}, {{"precision", "tf32x3"}, {"fused_optimizer", "on"}});
  EXPECT_TRUE(compare_results(before.stats, after.stats, {}).pairs.empty());
  CompareOptions options;
  options.ignored_settings = {"precision"};
  EXPECT_TRUE(compare_results(before.stats, after.stats, options).pairs.empty());  // fused_optimizer still differs
  options.ignored_settings.push_back(kPerBatchSettings);
  const Comparison c = compare_results(before.stats, after.stats, options);
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_NEAR(c.pairs[0].ratio.ratio, 1.5, 1e-12);
  EXPECT_EQ(c.pairs[0].verdict, Verdict::faster);
  options.ignored_settings = {"fused_optimizer"};  // per-batch is not needed where one setting is named
  after.results.front().attribute_text["precision"] = "fp32";
  EXPECT_EQ(compare_results(before.stats, after.stats, options).pairs.size(), 1u);
  EXPECT_TRUE(is_ignorable_setting("precision"));
  EXPECT_TRUE(is_ignorable_setting("ranks"));
  EXPECT_TRUE(is_ignorable_setting(kPerBatchSettings));
  EXPECT_FALSE(is_ignorable_setting("hosts"));  // a run condition: never paired on
  EXPECT_FALSE(is_ignorable_setting("no_such_setting"));
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
