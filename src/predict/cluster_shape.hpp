// Purpose: the shape of a cluster for the all-reduce cost model (docs/cluster.md): nodes of GPUs joined inside by
// NVLink, NICs per node across; how a GPU count is laid out on it, and the `--cluster 2x8` text form.
#pragma once

#include <string>

namespace mgpu::predict {

struct ClusterShape {
  int nodes = 1;
  int gpus_per_node = 1;
  int nics_per_node = 1;  // the network adapters NCCL drives between nodes (one per GPU on an HGX node)
  int gpus() const { return nodes * gpus_per_node; }
};

// "2x8" (nodes x GPUs per node; 'X' too): UsageError naming `option` and the text unless both are whole numbers from
// 1 to 1024. The NICs per node are left at the GPUs per node.
ClusterShape parse_cluster_shape(const std::string& option, const std::string& text);

// `gpus` GPUs on nodes of `gpus_per_node`: one node when they fit in one, else full nodes. UsageError when `gpus`
// is more than a node holds and not a multiple of it (no node is left part full), or any count is below 1.
ClusterShape layout_of(int gpus, int gpus_per_node, int nics_per_node);

// "2 nodes x 8 GPUs, 8 NICs per node", "1 node x 4 GPUs".
std::string shape_text(const ClusterShape& shape);

}  // namespace mgpu::predict
