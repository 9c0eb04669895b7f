// Purpose: the PyTorch peer's results writer (bench/peers/results_h5.py, h5py only) produces files that our C++
// reader accepts as they are, with exactly the configuration attributes our schema lists (its own table of them cannot
// drift): run through its self-test, then read with read_results_file. Skips without h5py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include "results/results_reader.hpp"
#include "results/results_writer.hpp"

namespace {

TEST(PeerResults, ThePeerWriterProducesAFileOurReaderAccepts) {
  const std::string python = MGPU_H5PY_PYTHON;
  if (python.empty()) GTEST_SKIP() << "no python3 with h5py at configure time";
  const std::string file = (std::filesystem::temp_directory_path() / "mgpu_peer_results_test.h5").string();
  const std::string command = "'" + python + "' '" + MGPU_PEER_WRITER + "' --self-test '" + file + "' > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const mgpu::ResultsFile results = mgpu::read_results_file(file);
  EXPECT_EQ(results.root.schema_version, mgpu::results_schema::kVersion);
  ASSERT_EQ(results.configurations.size(), 1u);
  const mgpu::ConfigurationResults& c = results.configurations.front();
  EXPECT_EQ(c.metadata.implementation, "pytorch-ddp");
  EXPECT_EQ(c.metadata.ranks(), 2);
  EXPECT_EQ(c.runs(), 2);
  EXPECT_EQ(c.progress.complete, 1);
  EXPECT_EQ(c.steps(), 4);
  // What the writer put where: step of run 1, rank 1, step 3 = 0.06 + 1; the inseparable phases are NaN.
  EXPECT_DOUBLE_EQ(c.distributed_step_ms(1, 3), 1.06);
  EXPECT_TRUE(std::isnan(c.measurements.phase_ms[int(mgpu::Phase::allreduce)].at(0, 0, 0)));
  // The throttled flag follows the clocks as in ours: rank 1's maximum is unknown (0), so it is never flagged.
  EXPECT_EQ(c.measurements.throttled.at(0, 0), 0);
  EXPECT_EQ(c.measurements.throttled.at(0, 1), 0);
  // Every attribute the schema gives a configuration (and its progress), and no other.
  std::set<std::string> schema;
  mgpu::results_schema::ConfigurationMetadata metadata;
  mgpu::results_schema::for_each_attribute_of_configuration(
      metadata, [&](const char* name, const auto&) { schema.insert(name); });
  mgpu::results_schema::ConfigurationProgress progress;
  mgpu::results_schema::for_each_attribute_of_progress(progress,
                                                       [&](const char* name, const auto&) { schema.insert(name); });
  std::set<std::string> written;
  for (const auto& [name, text] : c.attribute_text) written.insert(name);
  for (const std::string& name : schema) EXPECT_EQ(written.count(name), 1u) << name << ": not written by the peer";
  for (const std::string& name : written) EXPECT_EQ(schema.count(name), 1u) << name << ": not in results_schema.hpp";
  std::filesystem::remove(file);
}

}  // namespace
