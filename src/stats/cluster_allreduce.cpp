// Purpose: the cluster all-reduce model's terms and the fastest candidate (cluster_allreduce.hpp; the equations and
// the fit are docs/cluster.md's).
#include "stats/cluster_allreduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "platform/error.hpp"
#include "results/attribute_text.hpp"

namespace mgpu::stats {
namespace {

// The protocol constants, fitted together (minimax relative error) to the nccl-tests #309 table, 2 x 8 H100 with 8
// NDR NICs a node (bench/results/published-allreduce/; docs/cluster.md gives the fit and its error per size).
constexpr double kBaseLatencyUs = 6.3;
// Hop latency multipliers: LL's hop is the unit; LL128 waits on 128-byte lines, Simple on whole chunks, and the
// tree's Simple pipeline fills its depth with chunks before the first arrives (the 16 GiB row bounds it).
constexpr double kLl128HopFactor = 3.2, kRingSimpleHopFactor = 2.8, kTreeSimpleHopFactor = 20.0;
// Shares of the algorithm bandwidth: LL moves 4 data bytes in 8 and polls flags (0.09), LL128 120 in 128 with a
// cap per channel (0.55); Simple is the algorithm bandwidth itself.
constexpr double kLlBandwidthShare = 0.09, kLl128BandwidthShare = 0.55;
// The tree's share of its bound: 250 GB/s between the 2 nodes against the node's own 275 GB/s on #309's 16 GiB.
constexpr double kTreeEfficiency = 0.91;

double hop_factor(CollectiveAlgorithm algorithm, WireProtocol protocol) {
  switch (protocol) {
    case WireProtocol::ll:
      return 1.0;
    case WireProtocol::ll128:
      return kLl128HopFactor;
    case WireProtocol::simple:
      break;
  }
  return algorithm == CollectiveAlgorithm::ring ? kRingSimpleHopFactor : kTreeSimpleHopFactor;
}

double bandwidth_share(WireProtocol protocol) {
  return protocol == WireProtocol::ll      ? kLlBandwidthShare
         : protocol == WireProtocol::ll128 ? kLl128BandwidthShare
                                           : 1.0;
}

// Stated NVLink figures per GPU generation (docs/cluster.md, "Inputs").
struct NvlinkGeneration {
  std::vector<std::string> gpus;  // substrings of the GPU name
  const char* name;
  double bus_gbs;              // NCCL's ring bus bandwidth inside the node
  double nvls_eight_gpus_gbs;  // the 8-GPU all-reduce's algorithm bandwidth with NVLink SHARP, 0 without it
};
const std::vector<NvlinkGeneration>& nvlink_generations() {
  // NVLink 4: 450 GB/s a direction, 370 GB/s of it through NCCL, and 275 GB/s algorithm bandwidth with NVLink SHARP
  // on 8 GPUs (NVIDIA, nccl-tests #212). NVLink 3: 300 GB/s a direction, the same 20% protocol overhead.
  static const std::vector<NvlinkGeneration> generations = {{{"H100", "H200"}, "NVLink 4", 370.0, 275.0},
                                                            {{"A100"}, "NVLink 3", 240.0, 0.0}};
  return generations;
}
// A small message's NVLink hop where no sweep measured it (assumed; NCCL's tuning model puts one LL hop near 0.6 us).
constexpr double kStatedNvlinkHopUs = 0.6;

void check_shape(const ClusterShape& shape) {
  if (shape.nodes < 1 || shape.gpus_per_node < 1 || shape.nics_per_node < 1)
    throw UsageError("cluster all-reduce: shape " + shape_text(shape) + ": every count must be at least 1");
}

}  // namespace

const char* algorithm_name(CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::ring ? "ring" : "tree";
}

const char* protocol_name(WireProtocol protocol) {
  return protocol == WireProtocol::ll ? "LL" : protocol == WireProtocol::ll128 ? "LL128" : "Simple";
}

double base_latency_us() { return kBaseLatencyUs; }

const std::vector<FittedConstant>& fitted_constants() {
  static const std::vector<FittedConstant> constants = {{"base latency (us)", kBaseLatencyUs},
                                                        {"LL128 hop factor", kLl128HopFactor},
                                                        {"ring Simple hop factor", kRingSimpleHopFactor},
                                                        {"tree Simple hop factor", kTreeSimpleHopFactor},
                                                        {"LL bandwidth share", kLlBandwidthShare},
                                                        {"LL128 bandwidth share", kLl128BandwidthShare},
                                                        {"tree efficiency", kTreeEfficiency}};
  return constants;
}

NodeInterconnect node_from_sweep(const AllreduceCurve& curve) {
  if (curve.nodes != 1 || curve.ranks < 2 || curve.bytes_ms.empty())
    throw UsageError(
        "cluster all-reduce: the inside of a node comes from a sweep on 2 or more GPUs of one node; this "
        "one has " +
        std::to_string(curve.ranks) + " ranks on " + std::to_string(curve.nodes) + " nodes");
  const double g = curve.ranks;
  double fastest_ms = curve.bytes_ms.front().second;
  for (const auto& point : curve.bytes_ms) fastest_ms = std::min(fastest_ms, point.second);
  const auto& [largest_bytes, largest_ms] = curve.bytes_ms.back();
  NodeInterconnect node;
  node.algorithm_gbs = double(largest_bytes) / (largest_ms * 1e-3) / 1e9;
  node.bus_gbs = node.algorithm_gbs * 2 * (g - 1) / g;
  node.hop_latency_us = std::max(0.0, (fastest_ms * 1e3 - kBaseLatencyUs) / (2 * (g - 1)));
  char line[200];
  std::snprintf(line, sizeof line,
                "measured: the sweep on %d GPUs of one node (%.0f GB/s at %lld bytes, %.2f us a hop)", curve.ranks,
                node.algorithm_gbs, largest_bytes, node.hop_latency_us);
  node.source = line;
  return node;
}

std::optional<NodeInterconnect> nvlink_figures(const std::string& gpu_name, int gpus, bool nvls) {
  for (const NvlinkGeneration& generation : nvlink_generations())
    for (const std::string& match : generation.gpus)
      if (gpu_name.find(match) != std::string::npos) {
        NodeInterconnect node;
        node.bus_gbs = generation.bus_gbs;
        node.algorithm_gbs = gpus > 1 ? generation.bus_gbs * gpus / (2.0 * (gpus - 1)) : generation.bus_gbs;
        const bool sharp = nvls && gpus >= 8 && generation.nvls_eight_gpus_gbs > 0;
        if (sharp) node.algorithm_gbs = generation.nvls_eight_gpus_gbs;
        node.hop_latency_us = kStatedNvlinkHopUs;
        node.source = std::string("stated: ") + generation.name + " figures for " + match + " (" +
                      shortest_double_text(generation.bus_gbs) + " GB/s bus" +
                      (sharp ? ", NVLink SHARP " + shortest_double_text(node.algorithm_gbs) + " GB/s" : "") + ", " +
                      shortest_double_text(kStatedNvlinkHopUs) + " us a hop)";
        return node;
      }
  return std::nullopt;
}

PathHops ring_hops(const ClusterShape& shape) {
  check_shape(shape);
  const double n = shape.nodes, total = shape.gpus();
  const double hops = 2 * (total - 1);
  const double network = shape.nodes > 1 ? hops * n / total : 0.0;
  return {hops - network, network};
}

PathHops tree_hops(const ClusterShape& shape) {
  check_shape(shape);
  return {2.0 * (shape.gpus_per_node - 1), 2.0 * std::ceil(std::log2(double(shape.nodes)))};
}

double algorithm_bandwidth_gbs(CollectiveAlgorithm algorithm, const ClusterShape& shape, const NodeInterconnect& node,
                               const Link& nic) {
  check_shape(shape);
  const double total = shape.gpus();
  if (total < 2) return 0.0;
  const double nics_gbs = shape.nics_per_node * nic.bandwidth_gbs;
  if (algorithm == CollectiveAlgorithm::ring) {
    const double bus = shape.nodes > 1 ? std::min(node.bus_gbs, nics_gbs) : node.bus_gbs;
    return bus * total / (2 * (total - 1));
  }
  if (shape.nodes == 1) return kTreeEfficiency * node.algorithm_gbs;
  const double network = shape.nodes == 2 ? nics_gbs : nics_gbs / 2;
  return kTreeEfficiency * std::min(node.algorithm_gbs, network);
}

AllreduceCandidate candidate(CollectiveAlgorithm algorithm, WireProtocol protocol, const ClusterShape& shape,
                             const NodeInterconnect& node, const Link& nic) {
  const PathHops hops = algorithm == CollectiveAlgorithm::ring ? ring_hops(shape) : tree_hops(shape);
  AllreduceCandidate c;
  c.algorithm = algorithm;
  c.protocol = protocol;
  c.latency_us = kBaseLatencyUs +
                 hop_factor(algorithm, protocol) * (hops.intra * node.hop_latency_us + hops.network * nic.latency_us);
  c.bandwidth_gbs = bandwidth_share(protocol) * algorithm_bandwidth_gbs(algorithm, shape, node, nic);
  return c;
}

AllreduceCandidate fastest_candidate(long long bytes, const ClusterShape& shape, const NodeInterconnect& node,
                                     const Link& nic) {
  if (bytes <= 0) throw UsageError("cluster all-reduce: " + std::to_string(bytes) + " bytes: expected a positive size");
  if (shape.gpus() < 2) throw UsageError("cluster all-reduce: " + shape_text(shape) + ": nothing to reduce across");
  std::optional<AllreduceCandidate> best;
  for (const CollectiveAlgorithm algorithm : {CollectiveAlgorithm::ring, CollectiveAlgorithm::tree})
    for (const WireProtocol protocol : {WireProtocol::ll, WireProtocol::ll128, WireProtocol::simple}) {
      const AllreduceCandidate c = candidate(algorithm, protocol, shape, node, nic);
      if (!(c.bandwidth_gbs > 0)) continue;
      if (!best || c.ms(bytes) < best->ms(bytes)) best = c;
    }
  MGPU_REQUIRE(best.has_value(), "cluster all-reduce: no candidate has a bandwidth");
  return *best;
}

ClusterAllreduceModel::ClusterAllreduceModel(int gpus_per_node, int nics_per_node, Link nic, std::string gpu_name,
                                             std::vector<AllreduceCurve> curves)
    : gpus_per_node_(gpus_per_node),
      nics_per_node_(nics_per_node),
      nic_(std::move(nic)),
      gpu_name_(std::move(gpu_name)),
      curves_(std::move(curves)) {
  (void)layout_of(1, gpus_per_node_, nics_per_node_);  // refuses counts below 1
  if (!(nic_.bandwidth_gbs > 0) || !(nic_.latency_us >= 0))
    throw UsageError("cluster all-reduce: the NIC needs a positive bandwidth and a latency of at least 0");
}

ClusterShape ClusterAllreduceModel::layout(int gpus) const { return layout_of(gpus, gpus_per_node_, nics_per_node_); }

const AllreduceCurve* ClusterAllreduceModel::measured_curve(int gpus) const {
  const ClusterShape shape = layout(gpus);
  for (const AllreduceCurve& curve : curves_)
    if (curve.ranks == gpus && curve.nodes == shape.nodes) return &curve;
  return nullptr;
}

NodeInterconnect ClusterAllreduceModel::node(int gpus) const {
  if (gpus == 1) {
    // One GPU a node: nothing inside it limits the ring or the tree, and no hop stays in it.
    const double unlimited = std::numeric_limits<double>::infinity();
    return {unlimited, unlimited, 0.0, "one GPU a node: no link inside"};
  }
  for (const AllreduceCurve& curve : curves_)
    if (curve.ranks == gpus && curve.nodes == 1 && gpus > 1) return node_from_sweep(curve);
  if (const std::optional<NodeInterconnect> stated = nvlink_figures(gpu_name_, gpus, false)) return *stated;
  throw UsageError("no all-reduce sweep on " + std::to_string(gpus) + " GPUs of one node and no NVLink figures for '" +
                   gpu_name_ + "': give --allreduce with a sweep of mgpu_bench allreduce on " + std::to_string(gpus) +
                   " GPUs of one node");
}

AllreduceCandidate ClusterAllreduceModel::estimate(long long bytes, int gpus) const {
  const ClusterShape shape = layout(gpus);
  return fastest_candidate(bytes, shape, node(shape.gpus_per_node), nic_);
}

}  // namespace mgpu::stats
