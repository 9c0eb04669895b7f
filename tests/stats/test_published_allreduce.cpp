// Purpose: tests of holding the cluster model against a published table: each row's prediction is the fastest
// candidate's, its error relative to the published time, and the worst |error| kept apart below 1 MiB and from 1 to
// 128 MiB (a row above 128 MiB in neither), the signed error's range over every row; the error a prediction carries,
// only once a table is held out of the fit; bad rows and a GPU without NVLink figures refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "platform/error.hpp"
#include "stats/published_allreduce.hpp"

using namespace mgpu;
using namespace mgpu::stats;

namespace {

PublishedTable table_of(std::vector<PublishedTable::Row> rows) {
  PublishedTable table;
  table.name = "test table";
  table.gpu = "NVIDIA H200";
  table.nvls = false;
  table.link = "ib400";
  table.shape = {2, 8, 8};
  table.rows = std::move(rows);
  return table;
}

// What the model predicts for `bytes` on the test table's cluster, in us.
double predicted_us(long long bytes) {
  return fastest_candidate(bytes, {2, 8, 8}, *nvlink_figures("NVIDIA H200", 8, false), named_link("ib400")).ms(bytes) *
         1e3;
}

}  // namespace

TEST(PublishedAllreduce, EachRowAgainstTheFastestCandidate) {
  // Rows at 1.25x, 0.8x and 1x the model's own times: errors -20%, +25% and 0.
  const long long small = 4096, mid = 8 * kMiB, top = 128 * kMiB;
  const HeldTable held = hold_against(table_of(
      {{small, 1.25 * predicted_us(small), ""}, {mid, 0.8 * predicted_us(mid), ""}, {top, predicted_us(top), ""}}));
  ASSERT_EQ(held.rows.size(), 3u);
  EXPECT_NEAR(held.rows[0].error, -0.2, 1e-12);
  EXPECT_NEAR(held.rows[1].error, 0.25, 1e-12);
  EXPECT_NEAR(held.rows[2].error, 0.0, 1e-12);
  EXPECT_NEAR(held.rows[1].predicted_us, predicted_us(mid), 1e-9);
  EXPECT_NEAR(held.worst_abs_error_below_1_mib, 0.2, 1e-12);
  EXPECT_NEAR(held.worst_abs_error_1_to_128_mib, 0.25, 1e-12);  // 128 MiB itself is inside
  EXPECT_EQ(held.rows_below_1_mib, 1);
  EXPECT_EQ(held.rows_1_to_128_mib, 2);
  EXPECT_NE(held.node.source.find("NVLink 4"), std::string::npos);
  EXPECT_DOUBLE_EQ(held.nic.bandwidth_gbs, 48.0);
}

TEST(PublishedAllreduce, TheBandsEndAtOneAndAt128MiB) {
  // 1 MiB - 1 byte is below 1 MiB; 1 MiB is in the band; 128 MiB + 1 byte is in neither.
  const long long below = kMiB - 1, at = kMiB, above = 128 * kMiB + 1;
  const HeldTable held = hold_against(table_of(
      {{below, 2 * predicted_us(below), ""}, {at, predicted_us(at), ""}, {above, 10 * predicted_us(above), ""}}));
  EXPECT_EQ(held.rows_below_1_mib, 1);
  EXPECT_NEAR(held.worst_abs_error_below_1_mib, 0.5, 1e-12);
  EXPECT_EQ(held.rows_1_to_128_mib, 1);
  EXPECT_NEAR(held.worst_abs_error_1_to_128_mib, 0.0, 1e-12);
  EXPECT_NEAR(held.rows[2].error, -0.9, 1e-12);  // reported, outside both bands
}

TEST(PublishedAllreduce, TheErrorsRangeIsOverEveryRow) {
  // -90% above 128 MiB, +100% below 1 MiB, 0 between: every row counts, whatever its size.
  const long long below = 4096, at = kMiB, above = 256 * kMiB;
  const HeldTable held = hold_against(table_of(
      {{below, 0.5 * predicted_us(below), ""}, {at, predicted_us(at), ""}, {above, 10 * predicted_us(above), ""}}));
  EXPECT_NEAR(held.lowest_error, -0.9, 1e-12);
  EXPECT_NEAR(held.highest_error, 1.0, 1e-12);
  EXPECT_NEAR(held.worst_abs_error(), 1.0, 1e-12);
  // One row: the range is that row's error, not 0.
  const HeldTable one = hold_against(table_of({{at, 0.8 * predicted_us(at), ""}}));
  EXPECT_NEAR(one.lowest_error, 0.25, 1e-12);
  EXPECT_NEAR(one.highest_error, 0.25, 1e-12);
}

TEST(PublishedAllreduce, APredictionCarriesTheErrorOnceATableIsHeldOut) {
  PublishedTable fitted = table_of({{kMiB, predicted_us(kMiB) / 1.3, ""}});  // +30%, in-sample
  fitted.used_to_fit = true;
  PublishedTable held = table_of({{8 * kMiB, predicted_us(8 * kMiB) / 1.1, ""}});  // +10%, held out
  EXPECT_FALSE(carried_allreduce_error({fitted}).has_value());
  EXPECT_FALSE(carried_allreduce_error({}).has_value());
  ASSERT_TRUE(carried_allreduce_error({held}).has_value());
  EXPECT_NEAR(*carried_allreduce_error({held}), 0.1, 1e-12);
  // With a table held out, the worst row of every table given: the fitted one's 30% here.
  EXPECT_NEAR(*carried_allreduce_error({fitted, held}), 0.3, 1e-12);
}

TEST(PublishedAllreduce, BadRowsAndUnknownGpusAreRefusedByName) {
  for (const PublishedTable::Row& bad :
       {PublishedTable::Row{0, 10.0, ""}, PublishedTable::Row{8, 0.0, ""}, PublishedTable::Row{8, NAN, ""}}) {
    try {
      hold_against(table_of({bad}));
      FAIL() << bad.bytes << " bytes, " << bad.us << " us accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("'test table'"), std::string::npos) << e.what();
    }
  }
  PublishedTable unknown = table_of({{8, 10.0, ""}});
  unknown.gpu = "Some GPU";
  EXPECT_THROW(hold_against(unknown), UsageError);
  PublishedTable bad_link = table_of({{8, 10.0, ""}});
  bad_link.link = "ib999";
  EXPECT_THROW(hold_against(bad_link), UsageError);
}
