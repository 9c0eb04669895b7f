// Purpose: tests of the cluster all-reduce model against hand-computed values: the hops of the ring and the tree on
// one node and on several, each algorithm's bandwidth (the node's or the NICs', whichever limits; the tree on 2 nodes
// against more), every protocol's latency and bandwidth, the fastest candidate and its switches by size on #309's
// shape (LL to LL128 to the ring's Simple to the tree's Simple), the inside of a node from a sweep or stated NVLink
// figures, a measured sweep of a layout answering for it in the step model and the model's all-reduce alone scaled for
// an error band, and the fitted constants listed with the values the terms use.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "platform/error.hpp"
#include "stats/cluster_allreduce.hpp"
#include "stats/step_model.hpp"
#include "stats/step_model_fixture.hpp"

using namespace mgpu;
using namespace mgpu::stats;

namespace {

// Round figures: NVLink 300 GB/s bus, the node's own all-reduce 200 GB/s, 1 us a hop; NICs of 50 GB/s and 5 us.
NodeInterconnect round_node() { return {300.0, 200.0, 1.0, "test node"}; }
Link round_nic() { return {"test nic", 50.0, 5.0, "test"}; }

// #309's cluster: 2 x 8 H100 with NVLink SHARP, 8 NDR NICs a node.
const ClusterShape kShape309 = {2, 8, 8};
NodeInterconnect h100_node() { return *nvlink_figures("NVIDIA H100 80GB HBM3", 8, true); }

// The size at which candidate b becomes faster than a (a faster below it).
double crossing_bytes(const AllreduceCandidate& a, const AllreduceCandidate& b) {
  return (b.latency_us - a.latency_us) * 1e3 / (1 / a.bandwidth_gbs - 1 / b.bandwidth_gbs);
}

}  // namespace

TEST(ClusterAllreduce, RingHopsCrossNodesInTheShareOfItsLinksThatJoinNodes) {
  const PathHops one = ring_hops({1, 4, 4});
  EXPECT_DOUBLE_EQ(one.intra, 6.0);  // 2 (4 - 1)
  EXPECT_DOUBLE_EQ(one.network, 0.0);
  const PathHops two = ring_hops({2, 4, 2});
  EXPECT_DOUBLE_EQ(two.intra + two.network, 14.0);  // 2 (8 - 1)
  EXPECT_DOUBLE_EQ(two.network, 14.0 * 2 / 8);      // 2 of its 8 links join the nodes
  const PathHops flat = ring_hops({4, 1, 1});       // one GPU a node: every hop crosses
  EXPECT_DOUBLE_EQ(flat.network, 6.0);
  EXPECT_DOUBLE_EQ(flat.intra, 0.0);
}

TEST(ClusterAllreduce, TreeHopsAreTheChainInANodeAndTheTreeOfNodes) {
  EXPECT_DOUBLE_EQ(tree_hops({1, 8, 8}).intra, 14.0);
  EXPECT_DOUBLE_EQ(tree_hops({1, 8, 8}).network, 0.0);
  EXPECT_DOUBLE_EQ(tree_hops({2, 8, 8}).network, 2.0);  // 2 ceil(log2 2)
  EXPECT_DOUBLE_EQ(tree_hops({3, 8, 8}).network, 4.0);  // 2 ceil(log2 3)
  EXPECT_DOUBLE_EQ(tree_hops({4, 8, 8}).network, 4.0);
  EXPECT_DOUBLE_EQ(tree_hops({5, 8, 8}).network, 6.0);
}

TEST(ClusterAllreduce, OnOneNodeTheNodeAloneSetsTheBandwidth) {
  // Ring: 300 x 4 / 6; tree: the node's own 200 x 0.91. No NIC counts inside one node.
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::ring, {1, 4, 2}, round_node(), round_nic()), 200.0);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::tree, {1, 4, 2}, round_node(), round_nic()), 182.0);
  const Link slow{"slow", 0.001, 1000.0, "test"};
  EXPECT_DOUBLE_EQ(fastest_candidate(1 << 20, {1, 4, 1}, round_node(), slow).ms(1 << 20),
                   fastest_candidate(1 << 20, {1, 4, 1}, round_node(), round_nic()).ms(1 << 20));
}

TEST(ClusterAllreduce, AcrossNodesTheNicsCapTheRingAndTheTreeOnTwoNodesMovesTheMessageOnce) {
  // 2 NICs of 50 GB/s a node: the ring's bus bandwidth is min(300, 100) = 100, x 8 / 14.
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::ring, {2, 4, 2}, round_node(), round_nic()),
                   100.0 * 8 / 14);
  // 8 NICs: NVLink's 300 limits.
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::ring, {2, 4, 8}, round_node(), round_nic()),
                   300.0 * 8 / 14);
  // Tree on 2 nodes: 0.91 x min(200, 100); on 3 and more, half the NICs' sum: 0.91 x min(200, 50).
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::tree, {2, 4, 2}, round_node(), round_nic()), 91.0);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::tree, {3, 4, 2}, round_node(), round_nic()), 45.5);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth_gbs(CollectiveAlgorithm::tree, {2, 4, 8}, round_node(), round_nic()), 182.0);
}

TEST(ClusterAllreduce, EveryProtocolsLatencyAndBandwidth) {
  // 2 x 4, 2 NICs. Ring hops: 10.5 on NVLink (1 us), 3.5 through NICs (5 us): 28 us; tree: 6 + 2 x 5 = 16 us.
  const ClusterShape shape{2, 4, 2};
  const auto c = [&](CollectiveAlgorithm a, WireProtocol p) {
    return candidate(a, p, shape, round_node(), round_nic());
  };
  const double base = base_latency_us(), ring_gbs = 100.0 * 8 / 14, tree_gbs = 91.0;
  EXPECT_DOUBLE_EQ(base, 6.3);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::ll).latency_us, base + 28, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::ll128).latency_us, base + 3.2 * 28, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::simple).latency_us, base + 2.8 * 28, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::tree, WireProtocol::ll).latency_us, base + 16, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::tree, WireProtocol::ll128).latency_us, base + 3.2 * 16, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::tree, WireProtocol::simple).latency_us, base + 20 * 16, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::ll).bandwidth_gbs, 0.09 * ring_gbs, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::ll128).bandwidth_gbs, 0.55 * ring_gbs, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::ring, WireProtocol::simple).bandwidth_gbs, ring_gbs, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::tree, WireProtocol::ll).bandwidth_gbs, 0.09 * tree_gbs, 1e-12);
  EXPECT_NEAR(c(CollectiveAlgorithm::tree, WireProtocol::simple).bandwidth_gbs, tree_gbs, 1e-12);
  // time = latency + bytes / bandwidth: the ring's Simple on 10 MB.
  const AllreduceCandidate simple = c(CollectiveAlgorithm::ring, WireProtocol::simple);
  EXPECT_NEAR(simple.ms(10000000), (base + 2.8 * 28) * 1e-3 + 1e7 / (ring_gbs * 1e9) * 1e3, 1e-15);
}

// On #309's shape the fastest goes from the tree's LL (small messages) to its LL128 near 1.09 MB, to the ring's
// Simple near 17.2 MB, and back to the tree's Simple near 253 MB (it moves the message once between 2 nodes).
TEST(ClusterAllreduce, ProtocolAndAlgorithmSwitchBySizeOnTwoNodes) {
  const NodeInterconnect node = h100_node();
  const Link nic = named_link("ib400");
  const auto c = [&](CollectiveAlgorithm a, WireProtocol p) { return candidate(a, p, kShape309, node, nic); };
  const auto fastest = [&](double bytes) { return fastest_candidate((long long)bytes, kShape309, node, nic); };
  const auto is = [](const AllreduceCandidate& x, CollectiveAlgorithm a, WireProtocol p) {
    return x.algorithm == a && x.protocol == p;
  };
  using A = CollectiveAlgorithm;
  using P = WireProtocol;
  const double ll_to_ll128 = crossing_bytes(c(A::tree, P::ll), c(A::tree, P::ll128));
  const double ll128_to_ring = crossing_bytes(c(A::tree, P::ll128), c(A::ring, P::simple));
  const double ring_to_tree = crossing_bytes(c(A::ring, P::simple), c(A::tree, P::simple));
  EXPECT_NEAR(ll_to_ll128, 1.09e6, 0.01e6);
  EXPECT_NEAR(ll128_to_ring, 17.16e6, 0.01e6);
  EXPECT_NEAR(ring_to_tree, 253.3e6, 0.1e6);
  EXPECT_TRUE(is(fastest(8), A::tree, P::ll));
  EXPECT_TRUE(is(fastest(ll_to_ll128 * 0.99), A::tree, P::ll));
  EXPECT_TRUE(is(fastest(ll_to_ll128 * 1.01), A::tree, P::ll128));
  EXPECT_TRUE(is(fastest(ll128_to_ring * 0.99), A::tree, P::ll128));
  EXPECT_TRUE(is(fastest(ll128_to_ring * 1.01), A::ring, P::simple));
  EXPECT_TRUE(is(fastest(ring_to_tree * 0.99), A::ring, P::simple));
  EXPECT_TRUE(is(fastest(ring_to_tree * 1.01), A::tree, P::simple));
}

TEST(ClusterAllreduce, OnThreeNodesTheRingKeepsLargeMessages) {
  // The tree moves a message twice through a node's NICs on more than 2 nodes: the ring's Simple wins at 1 GB.
  const NodeInterconnect node = h100_node();
  const AllreduceCandidate large = fastest_candidate(1000000000, {3, 8, 8}, node, named_link("ib400"));
  EXPECT_EQ(large.algorithm, CollectiveAlgorithm::ring);
  EXPECT_EQ(large.protocol, WireProtocol::simple);
  EXPECT_THROW(fastest_candidate(0, kShape309, node, named_link("ib400")), UsageError);
  EXPECT_THROW(fastest_candidate(100, {1, 1, 1}, node, named_link("ib400")), UsageError);
}

TEST(ClusterAllreduce, TheNodeFromASweepOnOneNode) {
  // 4 GPUs: the fastest 0.0123 ms, 1e8 bytes in 0.5 ms: 200 GB/s, bus 300, hop (12.3 - 6.3) / 6 = 1 us.
  const AllreduceCurve curve{4, {{8, 0.0125}, {1000, 0.0123}, {100000000, 0.5}}, 1};
  const NodeInterconnect node = node_from_sweep(curve);
  EXPECT_NEAR(node.algorithm_gbs, 200.0, 1e-9);
  EXPECT_NEAR(node.bus_gbs, 300.0, 1e-9);
  EXPECT_NEAR(node.hop_latency_us, 1.0, 1e-9);
  EXPECT_NE(node.source.find("measured"), std::string::npos);
  // A sweep faster than the base latency leaves no hop cost, not a negative one.
  EXPECT_DOUBLE_EQ(node_from_sweep({2, {{8, 0.004}, {1000000, 0.02}}, 1}).hop_latency_us, 0.0);
  EXPECT_THROW(node_from_sweep({4, {{8, 0.01}}, 2}), UsageError);  // across 2 nodes: not a node's inside
  EXPECT_THROW(node_from_sweep({1, {{8, 0.01}}, 1}), UsageError);
}

TEST(ClusterAllreduce, StatedNvlinkFiguresByGpu) {
  const NodeInterconnect h200 = *nvlink_figures("NVIDIA H200", 8, false);
  EXPECT_DOUBLE_EQ(h200.bus_gbs, 370.0);
  EXPECT_DOUBLE_EQ(h200.algorithm_gbs, 370.0 * 8 / 14);  // the ring's, without NVLink SHARP
  EXPECT_DOUBLE_EQ(h200.hop_latency_us, 0.6);
  EXPECT_NE(h200.source.find("stated: NVLink 4"), std::string::npos) << h200.source;
  EXPECT_DOUBLE_EQ(nvlink_figures("NVIDIA H100 80GB HBM3", 8, true)->algorithm_gbs, 275.0);  // NVLink SHARP on 8
  EXPECT_DOUBLE_EQ(nvlink_figures("NVIDIA H100 80GB HBM3", 4, true)->algorithm_gbs, 370.0 * 4 / 6);  // not on 4
  const NodeInterconnect a100 = *nvlink_figures("NVIDIA A100-SXM4-40GB", 8, true);
  EXPECT_DOUBLE_EQ(a100.bus_gbs, 240.0);
  EXPECT_DOUBLE_EQ(a100.algorithm_gbs, 240.0 * 8 / 14);  // no NVLink SHARP on NVLink 3
  EXPECT_FALSE(nvlink_figures("NVIDIA GeForce RTX 4090", 8, false).has_value());
}

TEST(ClusterAllreduce, TheClusterAnswersEachGpuCountByItsLayout) {
  const AllreduceCurve one_node_two{2, {{1000, 0.0083}, {100000000, 1.0}}, 1};
  const AllreduceCurve two_nodes_four{4, {{1000, 0.05}, {100000000, 5.0}}, 2};
  const ClusterAllreduceModel cluster(2, 1, round_nic(), "GPU", {one_node_two, two_nodes_four});
  // 2 GPUs: one node, the 2-rank sweep of one node; 4 GPUs: 2 nodes of 2, the 4-rank sweep across 2 nodes.
  ASSERT_NE(cluster.measured_curve(2), nullptr);
  EXPECT_EQ(cluster.measured_curve(2)->nodes, 1);
  ASSERT_NE(cluster.measured_curve(4), nullptr);
  EXPECT_EQ(cluster.measured_curve(4)->nodes, 2);
  EXPECT_EQ(cluster.measured_curve(8), nullptr);
  // 8 GPUs: 4 nodes of 2, the model with the node from the 2-rank sweep: hop (8.3 - 6.3) / 2 = 1 us.
  EXPECT_NEAR(cluster.node(2).hop_latency_us, 1.0, 1e-9);
  const AllreduceCandidate eight = cluster.estimate(1000000, 8);
  EXPECT_DOUBLE_EQ(eight.ms(1000000), fastest_candidate(1000000, {4, 2, 1}, cluster.node(2), round_nic()).ms(1000000));
  // One GPU a node: nothing inside it limits.
  EXPECT_TRUE(std::isinf(cluster.node(1).bus_gbs));
  // Nodes of 4 with no sweep on 4 GPUs of one node and a GPU without NVLink figures: named.
  const ClusterAllreduceModel unknown(4, 4, round_nic(), "GPU", {one_node_two});
  try {
    unknown.estimate(1000, 8);
    FAIL() << "no inside of a node of 4";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("4 GPUs of one node"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'GPU'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ClusterAllreduceModel(2, 1, {"bad", 0.0, 5.0, ""}, "GPU", {}), UsageError);
}

// In the step model a sweep measured on a GPU count's layout answers for it (interpolated), the cluster model for
// the others (estimated); a link given too no longer replaces the sweep.
TEST(ClusterAllreduce, AMeasuredMultiNodeSweepOverridesTheModelInTheStep) {
  const ProbeRates rates = probe_rates(step_model_test::probe(), Precision::fp32);
  const AllreduceCurve across{2, {{1000, 0.02}, {100000, 0.2}}, 2};  // 2 ranks on 2 nodes
  StepModel model(rates, {across}, round_nic(), true);
  model.use_cluster(ClusterAllreduceModel(1, 1, round_nic(), "GPU", {across}));
  TermSource source = TermSource::measured;
  EXPECT_NEAR(model.allreduce_ms(10000, 2, &source), 1.06 * 0.02 * std::pow(10.0, 0.5), 1e-12);  // log midpoint
  EXPECT_EQ(source, TermSource::interpolated);
  const double modelled = model.allreduce_ms(10000, 4, &source);
  EXPECT_EQ(source, TermSource::estimated);
  EXPECT_NEAR(modelled, 1.06 * fastest_candidate(10000, {4, 1, 1}, model.cluster()->node(1), round_nic()).ms(10000),
              1e-12);
  EXPECT_EQ(model.allreduce_ms(10000, 1, &source), 0.0);
}

// An error band's end scales the cluster model's all-reduce in the step, never a measured sweep's.
TEST(ClusterAllreduce, TheBandsScaleReachesOnlyTheModelsAllreduce) {
  const ProbeRates rates = probe_rates(step_model_test::probe(), Precision::fp32);
  const AllreduceCurve across{2, {{1000, 0.02}, {100000, 0.2}}, 2};  // 2 ranks on 2 nodes: measured
  StepModel model(rates, {across}, round_nic(), true);
  model.use_cluster(ClusterAllreduceModel(1, 1, round_nic(), "GPU", {across}));
  TermSource source = TermSource::measured;
  const double measured = model.allreduce_ms(10000, 2, &source), modelled = model.allreduce_ms(10000, 4, &source);
  model.scale_modelled_allreduce(1.25);
  EXPECT_DOUBLE_EQ(model.allreduce_ms(10000, 2, &source), measured);
  EXPECT_NEAR(model.allreduce_ms(10000, 4, &source), 1.25 * modelled, 1e-15);
  EXPECT_EQ(source, TermSource::estimated);
  EXPECT_THROW(model.scale_modelled_allreduce(0.0), UsageError);
  EXPECT_THROW(model.scale_modelled_allreduce(-1.0), UsageError);
  EXPECT_THROW(model.scale_modelled_allreduce(INFINITY), UsageError);
}

// The constants fitted to #309, as the terms use them (EveryProtocolsLatencyAndBandwidth pins the terms): seven.
TEST(ClusterAllreduce, TheFittedConstantsAreTheTermsOwn) {
  std::map<std::string, double> constants;
  for (const FittedConstant& c : fitted_constants()) constants[c.name] = c.value;
  ASSERT_EQ(constants.size(), 7u);
  EXPECT_DOUBLE_EQ(constants.at("base latency (us)"), base_latency_us());
  EXPECT_DOUBLE_EQ(constants.at("LL128 hop factor"), 3.2);
  EXPECT_DOUBLE_EQ(constants.at("ring Simple hop factor"), 2.8);
  EXPECT_DOUBLE_EQ(constants.at("tree Simple hop factor"), 20.0);
  EXPECT_DOUBLE_EQ(constants.at("LL bandwidth share"), 0.09);
  EXPECT_DOUBLE_EQ(constants.at("LL128 bandwidth share"), 0.55);
  EXPECT_DOUBLE_EQ(constants.at("tree efficiency"), 0.91);
}
