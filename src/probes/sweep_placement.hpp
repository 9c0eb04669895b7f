// Purpose: where an all-reduce sweep's ranks ran, for its results group (what `mgpu_analyze predict` lays a measured
// multi-node sweep out by): nodes and GPUs per node from every rank's host, and the network adapters NCCL's own
// topology lists on rank 0's node (the file NCCL_TOPO_DUMP_FILE names, which NCCL writes as its communicator starts).
#pragma once

#include <string>
#include <vector>

namespace mgpu {

// Distinct hosts and the most ranks on one of them (`hosts`: every rank's host, in rank order; at least one).
struct SweepPlacement {
  int nodes = 1;
  int gpus_per_node = 1;
};
SweepPlacement placement_of(const std::vector<std::string>& hosts);

// The network adapters of an NCCL topology (its XML dump): each <net> element's name and speed (Mb/s), as
// "2 NICs in NCCL's topology of rank 0's node: mlx5_0 400 Gb/s, mlx5_1 400 Gb/s"; 0 and "" when it lists none.
struct TopologyNics {
  int count = 0;
  std::string description;
};
TopologyNics nics_in_topology(const std::string& xml);

// Rank 0's topology dump for the life of the object: NCCL_TOPO_DUMP_FILE pointed at a file of ours for the
// communicator's start (unless the caller names one already), and the variable restored once the communicator is up
// (release_variable), so that the recorded NCCL environment is the caller's. Reading gives what NCCL wrote.
class NcclTopologyDump {
 public:
  NcclTopologyDump();
  ~NcclTopologyDump();
  NcclTopologyDump(const NcclTopologyDump&) = delete;
  NcclTopologyDump& operator=(const NcclTopologyDump&) = delete;
  // After the communicator has started: the caller's NCCL_TOPO_DUMP_FILE again (unset when there was none).
  void release_variable();
  // The adapters of the dump, or 0 with a description of why there are none.
  TopologyNics nics() const;

 private:
  std::string path_;
  bool ours_ = false;
  bool variable_set_ = false;
};

}  // namespace mgpu
