// Purpose: tests of the cluster shape: `--cluster NxG` parsed and refused by name at its bounds, a GPU count laid
// out on nodes (one node up to a node's GPUs, whole nodes above, refused between), and its text.
#include <gtest/gtest.h>

#include "platform/error.hpp"
#include "predict/cluster_shape.hpp"

using namespace mgpu;
using namespace mgpu::predict;

namespace {

// The UsageError's message, or "" when none was thrown.
template <typename Call>
std::string refusal(Call call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ClusterShape, ParsesNodesByGpusPerNode) {
  const ClusterShape shape = parse_cluster_shape("cluster", "2x8");
  EXPECT_EQ(shape.nodes, 2);
  EXPECT_EQ(shape.gpus_per_node, 8);
  EXPECT_EQ(shape.nics_per_node, 8);  // one NIC per GPU unless given
  EXPECT_EQ(shape.gpus(), 16);
  EXPECT_EQ(parse_cluster_shape("cluster", "4X4").nodes, 4);
  EXPECT_EQ(parse_cluster_shape("cluster", "1x1").gpus(), 1);
  EXPECT_EQ(parse_cluster_shape("cluster", "1024x1024").gpus(), 1024 * 1024);
}

TEST(ClusterShape, RefusesABadShapeNamingIt) {
  for (const char* bad : {"", "2", "x8", "2x", "0x8", "2x0", "1025x8", "2x1025", "2x8x1", "-2x8", "2.5x8", "2 x 8"}) {
    const std::string message = refusal([&] { parse_cluster_shape("cluster", bad); });
    EXPECT_NE(message.find(std::string("--cluster '") + bad + "'"), std::string::npos) << bad << ": " << message;
  }
}

TEST(ClusterShape, AGpuCountFillsOneNodeThenWholeNodes) {
  const ClusterShape one = layout_of(8, 8, 4);
  EXPECT_EQ(one.nodes, 1);
  EXPECT_EQ(one.gpus_per_node, 8);
  const ClusterShape part = layout_of(3, 8, 4);  // fewer than a node holds: one node of 3
  EXPECT_EQ(part.nodes, 1);
  EXPECT_EQ(part.gpus_per_node, 3);
  const ClusterShape two = layout_of(16, 8, 4);
  EXPECT_EQ(two.nodes, 2);
  EXPECT_EQ(two.gpus_per_node, 8);
  EXPECT_EQ(two.nics_per_node, 4);
  EXPECT_NE(refusal([] { layout_of(12, 8, 8); }).find("--gpus 12"), std::string::npos);  // one and a half nodes
  EXPECT_NE(refusal([] { layout_of(9, 8, 8); }).find("nodes of 8"), std::string::npos);
  EXPECT_NE(refusal([] { layout_of(0, 8, 8); }), "");
  EXPECT_NE(refusal([] { layout_of(2, 0, 8); }), "");
  EXPECT_NE(refusal([] { layout_of(2, 8, 0); }), "");
}

TEST(ClusterShape, Text) {
  EXPECT_EQ(shape_text({2, 8, 8}), "2 nodes x 8 GPUs, 8 NICs per node");
  EXPECT_EQ(shape_text({4, 4, 1}), "4 nodes x 4 GPUs, 1 NIC per node");
  EXPECT_EQ(shape_text({1, 4, 4}), "1 node x 4 GPUs");  // no network inside one node
  EXPECT_EQ(shape_text({1, 1, 1}), "1 node x 1 GPU");
}
