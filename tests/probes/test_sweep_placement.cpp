// Purpose: tests of where a sweep ran: nodes and GPUs per node from the hosts (uneven hosts too), the adapters of an
// NCCL topology dump (names and speeds, none listed), and the scoped NCCL_TOPO_DUMP_FILE (ours set then released and
// removed; the caller's read and left alone).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "platform/error.hpp"
#include "probes/sweep_placement.hpp"

using namespace mgpu;

namespace {

// An NCCL topology dump of two NDR adapters, trimmed to the elements around them.
constexpr char kTwoNics[] =
    "<system version=\"2\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:17:00.0\">\n"
    "      <gpu dev=\"0\" sm=\"90\" rank=\"0\"/>\n      <nic>\n"
    "        <net name=\"mlx5_0\" dev=\"0\" speed=\"400000\" port=\"1\" latency=\"0.000000\" gdr=\"1\"/>\n"
    "      </nic>\n    </pci>\n    <nic>\n"
    "      <net name=\"mlx5_1\" dev=\"1\" speed=\"400000\" port=\"1\" latency=\"0.000000\" gdr=\"1\"/>\n"
    "    </nic>\n  </cpu>\n</system>\n";

std::string file_text(const std::string& path) {
  std::ifstream file(path);
  return std::string(std::istreambuf_iterator<char>(file), {});
}

}  // namespace

TEST(SweepPlacement, NodesAreDistinctHostsAndGpusPerNodeTheMostOnOne) {
  const SweepPlacement two_by_two = placement_of({"a", "a", "b", "b"});
  EXPECT_EQ(two_by_two.nodes, 2);
  EXPECT_EQ(two_by_two.gpus_per_node, 2);
  const SweepPlacement one = placement_of({"a", "a", "a"});
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.gpus_per_node, 3);
  // Uneven: 3 on a, 1 on b.
  const SweepPlacement uneven = placement_of({"a", "b", "a", "a"});
  EXPECT_EQ(uneven.nodes, 2);
  EXPECT_EQ(uneven.gpus_per_node, 3);
  EXPECT_THROW(placement_of({}), Error);
}

TEST(SweepPlacement, TheAdaptersOfAnNcclTopologyDump) {
  const TopologyNics nics = nics_in_topology(kTwoNics);
  EXPECT_EQ(nics.count, 2);
  EXPECT_EQ(nics.description, "2 NICs in NCCL's topology of rank 0's node: mlx5_0 400 Gb/s, mlx5_1 400 Gb/s");
  // The <nic> wrapper is no adapter; a <net> without a speed is named alone.
  const TopologyNics bare = nics_in_topology("<nic><net name=\"eth0\" dev=\"0\"/></nic>");
  EXPECT_EQ(bare.count, 1);
  EXPECT_EQ(bare.description, "1 NIC in NCCL's topology of rank 0's node: eth0");
  const TopologyNics none = nics_in_topology("<system><cpu><pci/></cpu></system>");
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.description, "");
}

TEST(SweepPlacement, OurDumpFileIsSetForTheStartThenReleasedAndRemoved) {
  unsetenv("NCCL_TOPO_DUMP_FILE");
  std::string path;
  {
    NcclTopologyDump dump;
    const char* set = std::getenv("NCCL_TOPO_DUMP_FILE");
    ASSERT_NE(set, nullptr);
    path = set;
    EXPECT_EQ(dump.nics().count, 0);  // NCCL wrote nothing yet
    EXPECT_NE(dump.nics().description.find("NCCL wrote no topology"), std::string::npos);
    std::ofstream(path) << kTwoNics;  // as NCCL would, at the communicator's start
    dump.release_variable();
    EXPECT_EQ(std::getenv("NCCL_TOPO_DUMP_FILE"), nullptr);  // the recorded environment is the caller's
    EXPECT_EQ(dump.nics().count, 2);
  }
  EXPECT_EQ(file_text(path), "");  // removed
}

TEST(SweepPlacement, TheCallersDumpFileIsReadAndLeftAlone) {
  const std::string path = testing::TempDir() + "callers_topology.xml";
  std::ofstream(path) << kTwoNics;
  setenv("NCCL_TOPO_DUMP_FILE", path.c_str(), 1);
  {
    NcclTopologyDump dump;
    dump.release_variable();
    EXPECT_STREQ(std::getenv("NCCL_TOPO_DUMP_FILE"), path.c_str());
    EXPECT_EQ(dump.nics().count, 2);
  }
  EXPECT_STREQ(std::getenv("NCCL_TOPO_DUMP_FILE"), path.c_str());
  EXPECT_EQ(file_text(path), kTwoNics);
  unsetenv("NCCL_TOPO_DUMP_FILE");
  std::remove(path.c_str());
}
