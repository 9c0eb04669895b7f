// Purpose: tests of setting_attribute.hpp, where typed settings meet the file's attribute types: a text no value of a
// setting has is refused naming the attribute; "n/a" (the peer's word for a setting it has no counterpart of) and a
// setting that does not apply leave the setting as it was; numbers pass through, floats as doubles.
#include <gtest/gtest.h>

#include <string>

#include "config/step_settings.hpp"
#include "results/setting_attribute.hpp"

namespace mgpu::results_schema {
namespace {

TEST(SettingAttribute, StoredFormsAreTheFilesVocabulary) {
  EXPECT_EQ(stored_setting(true, true), "on");
  EXPECT_EQ(stored_setting(false, true), "off");
  EXPECT_EQ(stored_setting(Precision::tf32, true), "tf32");
  EXPECT_EQ(stored_setting(WeightGradientOrder::layerwise, false), "n/a");
  EXPECT_EQ(stored_setting(2.5, false), 0.0);
  EXPECT_EQ(stored_setting(2.5, true), 2.5);
  static_assert(std::is_same_v<StoredSetting<float>, double>);
  static_assert(std::is_same_v<StoredSetting<GemmTuning>, std::string>);
  static_assert(std::is_same_v<StoredSetting<int>, int>);
}

TEST(SettingAttribute, EveryNameOfEveryEnumReadsBack) {
  for (const TimingMode t : {TimingMode::events, TimingMode::step, TimingMode::none, TimingMode::interleaved}) {
    TimingMode read = TimingMode::events;
    restore_setting(read, stored_setting(t, true), true, "timing");
    EXPECT_EQ(read, t) << setting_name(t);
  }
  for (const GemmTuning t : {GemmTuning::alone, GemmTuning::step, GemmTuning::plan}) {
    GemmTuning read = GemmTuning::alone;
    restore_setting(read, stored_setting(t, true), true, "gemm_tuning");
    EXPECT_EQ(read, t) << setting_name(t);
  }
}

TEST(SettingAttribute, ATextNoValueHasIsRefusedNamingTheAttribute) {
  Precision precision = Precision::fp32;
  try {
    restore_setting(precision, std::string("fp8"), true, "precision");
    ADD_FAILURE() << "fp8 accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "attribute precision: 'fp8' is no value of this setting");
  }
  bool graph = false;
  try {
    restore_setting(graph, std::string("maybe"), true, "graph");
    ADD_FAILURE() << "maybe accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "attribute graph: 'maybe' is neither on nor off");
  }
  EXPECT_THROW(restore_setting(graph, std::string("On"), true, "graph"), UsageError);
}

TEST(SettingAttribute, NotApplicableLeavesTheSettingAsItWas) {
  GemmTuning tuning = GemmTuning::step;
  restore_setting(tuning, std::string("n/a"), true, "gemm_tuning");  // the peer's text
  EXPECT_EQ(tuning, GemmTuning::step);
  WeightGradientOrder order = WeightGradientOrder::deferred;
  restore_setting(order, std::string("layerwise"), false, "overlap_order");  // overlap off: means nothing
  EXPECT_EQ(order, WeightGradientOrder::deferred);
  double bucket_mb = 8.0;
  restore_setting(bucket_mb, 0.0, false, "bucket_mb");
  EXPECT_EQ(bucket_mb, 8.0);
  restore_setting(bucket_mb, 2.5, true, "bucket_mb");
  EXPECT_EQ(bucket_mb, 2.5);
  float rate = 0;
  restore_setting(rate, 1e-3, true, "adam_learning_rate");
  EXPECT_EQ(rate, 1e-3f);
}

}  // namespace
}  // namespace mgpu::results_schema
