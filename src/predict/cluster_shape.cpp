// Purpose: the cluster shape's parsing, layout and text (cluster_shape.hpp).
#include "predict/cluster_shape.hpp"

#include "platform/error.hpp"

namespace mgpu::predict {
namespace {

constexpr int kMaxCount = 1024;

// A whole number from 1 to kMaxCount, or -1.
int count_of(const std::string& text) {
  if (text.empty() || text.size() > 4) return -1;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= kMaxCount ? value : -1;
}

std::string plural(int count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

ClusterShape parse_cluster_shape(const std::string& option, const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  const int nodes = x == std::string::npos ? -1 : count_of(text.substr(0, x));
  const int gpus = x == std::string::npos ? -1 : count_of(text.substr(x + 1));
  if (nodes < 1 || gpus < 1)
    throw UsageError("--" + option + " '" + text + "': expected NODESxGPUS (nodes x GPUs per node, e.g. 2x8), each " +
                     "a whole number from 1 to " + std::to_string(kMaxCount));
  return {nodes, gpus, gpus};
}

ClusterShape layout_of(int gpus, int gpus_per_node, int nics_per_node) {
  if (gpus < 1 || gpus_per_node < 1 || nics_per_node < 1)
    throw UsageError("cluster layout: " + std::to_string(gpus) + " GPUs on nodes of " + std::to_string(gpus_per_node) +
                     " with " + std::to_string(nics_per_node) + " NICs: every count must be at least 1");
  if (gpus <= gpus_per_node) return {1, gpus, nics_per_node};
  if (gpus % gpus_per_node != 0)
    throw UsageError("--gpus " + std::to_string(gpus) + ": not a whole number of nodes of " +
                     std::to_string(gpus_per_node) + " GPUs (--gpus-per-node)");
  return {gpus / gpus_per_node, gpus_per_node, nics_per_node};
}

std::string shape_text(const ClusterShape& shape) {
  std::string text = plural(shape.nodes, "node") + " x " + plural(shape.gpus_per_node, "GPU");
  if (shape.nodes > 1) text += ", " + plural(shape.nics_per_node, "NIC") + " per node";
  return text;
}

}  // namespace mgpu::predict
