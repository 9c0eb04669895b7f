// Purpose: the gradient all-reduce on a cluster shape (docs/cluster.md): NCCL's two algorithms over nodes of
// NVLink-joined GPUs with NICs between them, the ring (every GPU in one loop) and the tree (a chain inside each node,
// a tree of nodes), each in its three protocols (LL, LL128, Simple); per size the fastest of the six counts, as
// NCCL's tuner chooses. Each candidate is latency + bytes / bandwidth: the hop latencies of its path scaled by the
// protocol, and the bandwidth of the node (a measured sweep or stated NVLink figures) or of the NICs, whichever
// limits, scaled by the protocol. The protocol constants are fitted to a published 2-node table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stats/allreduce_model.hpp"
#include "stats/cluster_shape.hpp"

namespace mgpu::stats {

enum class CollectiveAlgorithm { ring, tree };
enum class WireProtocol { ll, ll128, simple };
const char* algorithm_name(CollectiveAlgorithm algorithm);  // "ring", "tree"
const char* protocol_name(WireProtocol protocol);           // "LL", "LL128", "Simple"

// Inside one node: what its own all-reduce sustains and what one NVLink hop of a small message costs.
struct NodeInterconnect {
  double bus_gbs = 0;        // ring bus bandwidth (decimal GB/s): what NVLink carries per GPU and direction
  double algorithm_gbs = 0;  // the node's all-reduce, bytes / time at large sizes (NVLink SHARP included where on)
  double hop_latency_us = 0;
  std::string source;
};

// The launch and set-up every candidate pays (us; fitted, docs/cluster.md): node_from_sweep takes it out of a
// measured small all-reduce to leave the hops.
double base_latency_us();

// The constants fitted together to the published table marked used_to_fit (published_allreduce.hpp): each name and
// value, so that what judges the fit can say how many constants its rows were fitted with.
struct FittedConstant {
  const char* name;
  double value;
};
const std::vector<FittedConstant>& fitted_constants();

// From a sweep on `curve.ranks` GPUs of one node: the algorithm bandwidth at its largest size, the bus bandwidth
// (x 2(g-1)/g, the ring's), and the hop latency: (its fastest time - the base latency) / 2(g-1), the ring's hops.
// UsageError for a curve of several nodes, of one rank, or without sizes.
NodeInterconnect node_from_sweep(const AllreduceCurve& curve);

// Stated NVLink figures for `gpus` GPUs of one node by GPU name ("NVIDIA H200", "NVIDIA A100-SXM4-80GB"): NVLink 4
// (H100, H200) and NVLink 3 (A100); with NVLink SHARP (`nvls`, NCCL's default on an NVSwitch node of 8; mgpu_bench's
// launchers set NCCL_NVLS_ENABLE=0) the 8-GPU all-reduce's own rate. nullopt for another GPU.
std::optional<NodeInterconnect> nvlink_figures(const std::string& gpu_name, int gpus, bool nvls);

// The hops a small message crosses on `shape`: inside nodes (NVLink) and between them (a NIC).
struct PathHops {
  double intra = 0, network = 0;
};
// Ring: 2(N-1) hops, of which the share that crosses nodes is n/N (n of its N links join two nodes).
PathHops ring_hops(const ClusterShape& shape);
// Tree: up and down the chain of each node, 2(g-1), and the tree of nodes, 2 ceil(log2 n).
PathHops tree_hops(const ClusterShape& shape);

// Algorithm bandwidth (GB/s) before the protocol. Ring: bus = the node's, capped by the NICs' sum on several nodes
// (each ring crosses the network on its own NIC), x N / 2(N-1). Tree: the node's algorithm bandwidth, capped by the
// NICs' sum on 2 nodes (each node sends and receives the whole message once) and half of it on more (a double
// binary tree moves it twice), x the tree's fitted efficiency. 0 for the tree on one node of one GPU.
double algorithm_bandwidth_gbs(CollectiveAlgorithm algorithm, const ClusterShape& shape, const NodeInterconnect& node,
                               const Link& nic);

// One candidate: base + the protocol's hop multiplier x (intra hops x NVLink hop + network hops x NIC latency), and
// the protocol's share of the algorithm bandwidth.
struct AllreduceCandidate {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  WireProtocol protocol = WireProtocol::simple;
  double latency_us = 0;
  double bandwidth_gbs = 0;
  double ms(long long bytes) const { return latency_us * 1e-3 + double(bytes) / (bandwidth_gbs * 1e9) * 1e3; }
};
AllreduceCandidate candidate(CollectiveAlgorithm algorithm, WireProtocol protocol, const ClusterShape& shape,
                             const NodeInterconnect& node, const Link& nic);

// The fastest candidate for `bytes` on `shape` (at least 2 GPUs); UsageError for fewer or for bytes <= 0.
AllreduceCandidate fastest_candidate(long long bytes, const ClusterShape& shape, const NodeInterconnect& node,
                                     const Link& nic);

// The cluster the step model predicts for: GPU counts laid out on nodes of gpus_per_node with nics_per_node NICs of
// `nic` each; a measured sweep of a layout (its ranks, nodes and GPUs per node) answers for it, the model for the
// rest, with the inside of a node from a measured sweep on one node of that many GPUs, else stated NVLink figures for
// `gpu_name` (NVLink SHARP off, as mgpu_bench runs).
class ClusterAllreduceModel {
 public:
  ClusterAllreduceModel(int gpus_per_node, int nics_per_node, Link nic, std::string gpu_name,
                        std::vector<AllreduceCurve> curves);

  // The sweep measured on the layout of `gpus`, or null.
  const AllreduceCurve* measured_curve(int gpus) const;
  // The model's all-reduce of `bytes` on `gpus` GPUs laid out on the cluster (timed alone, as the sweep's op_ms).
  AllreduceCandidate estimate(long long bytes, int gpus) const;
  // The inside of a node of `gpus` GPUs: measured or stated; UsageError naming what to give when neither exists.
  NodeInterconnect node(int gpus) const;
  ClusterShape layout(int gpus) const;
  const Link& nic() const { return nic_; }

 private:
  int gpus_per_node_, nics_per_node_;
  Link nic_;
  std::string gpu_name_;
  std::vector<AllreduceCurve> curves_;
};

}  // namespace mgpu::stats
