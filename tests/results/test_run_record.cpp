// Purpose: tests of RunRecord's flat form for MPI_Gather (pack, unpack): every field comes back where it was.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "results/run_record.hpp"

namespace mgpu {
namespace {

// Every field a value of its own, none the default, so that two fields swapped in the flat form cannot pass.
RunRecord distinct_record() {
  RunRecord record(2);
  for (std::size_t i = 0; i < record.phase_ms.size(); ++i) record.phase_ms[i] = 0.5 + double(i);
  record.loss = {0.375, 0.125};
  record.memory_peak_bytes = 123456789;
  record.sm_clock_mhz = 1980;
  record.memory_clock_mhz = 3201;
  record.clock_samples = 4;
  record.measured_wall_ms = 7.25;
  record.phases_marked = false;
  record.batch_generation_ms = 0.0625;
  return record;
}

TEST(RunRecord, PackedRecordUnpacksToEveryFieldItHad) {
  const RunRecord record = distinct_record();
  const std::vector<double> packed = record.pack();
  ASSERT_EQ(packed.size(), RunRecord::packed_size(2));
  const RunRecord back = RunRecord::unpack(packed.data(), 2);
  EXPECT_EQ(back.total_steps, 2);
  EXPECT_EQ(back.phase_ms, record.phase_ms);
  EXPECT_EQ(back.loss, record.loss);
  EXPECT_EQ(back.memory_peak_bytes, 123456789);
  EXPECT_EQ(back.sm_clock_mhz, 1980);
  EXPECT_EQ(back.memory_clock_mhz, 3201);
  EXPECT_EQ(back.clock_samples, 4);
  EXPECT_EQ(back.measured_wall_ms, 7.25);
  EXPECT_FALSE(back.phases_marked);
  EXPECT_EQ(back.batch_generation_ms, 0.0625);
}

TEST(RunRecord, AMarkedRunWithoutBatchGenerationComesBackSo) {
  RunRecord record = distinct_record();
  record.phases_marked = true;
  record.batch_generation_ms = std::numeric_limits<double>::quiet_NaN();  // marked runs do not time it
  const RunRecord back = RunRecord::unpack(record.pack().data(), 2);
  EXPECT_TRUE(back.phases_marked);
  EXPECT_TRUE(std::isnan(back.batch_generation_ms));
}

}  // namespace
}  // namespace mgpu
