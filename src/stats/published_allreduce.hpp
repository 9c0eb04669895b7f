// Purpose: the cluster all-reduce model held against a published all-reduce table (docs/cluster.md, "Validation"):
// per row the published time, the model's, their relative error and the candidate that answered, the error's range
// over every row and its worst over 1 to 128 MiB and below 1 MiB; and the error a prediction carries, from the tables
// held out of the fit.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "stats/cluster_allreduce.hpp"

namespace mgpu::stats {

// A published multi-node all-reduce table (nccl-tests' all_reduce_perf: message bytes and time) and the cluster it
// ran on, in the model's inputs.
struct PublishedTable {
  std::string name, url, hardware, software;
  std::string gpu;           // the GPU's name, for its stated NVLink figures
  bool nvls = false;         // NVLink SHARP on (NCCL's default where the node has it)
  std::string link;          // a named link (allreduce_model.hpp), per NIC
  ClusterShape shape;        // nodes, GPUs and NICs per node
  bool used_to_fit = false;  // the table the protocol constants were fitted to
  struct Row {
    long long bytes = 0;
    double us = 0;
    std::string note;  // how the row was read off the source, where not plainly
  };
  std::vector<Row> rows;
};

struct HeldRow {
  long long bytes = 0;
  double published_us = 0, predicted_us = 0;
  double error = 0;  // (predicted - published) / published
  AllreduceCandidate candidate;
};
struct HeldTable {
  std::vector<HeldRow> rows;
  NodeInterconnect node;
  Link nic;
  // The worst |error| and the rows it is over, from 1 to 128 MiB and below 1 MiB.
  double worst_abs_error_1_to_128_mib = 0, worst_abs_error_below_1_mib = 0;
  int rows_1_to_128_mib = 0, rows_below_1_mib = 0;
  // The signed error's range over every row, whatever its size.
  double lowest_error = 0, highest_error = 0;
  double worst_abs_error() const { return std::max(-lowest_error, highest_error); }
};

inline constexpr long long kMiB = 1LL << 20;

// The model on every row; UsageError naming the table when its GPU has no NVLink figures, its link is unknown or a
// row is not a positive size and time.
HeldTable hold_against(const PublishedTable& table);

// The relative error of the model's all-reduce a prediction carries (docs/cluster.md, "The error band"): the worst
// |error| over every row of `tables`, once at least one of them was held out of the fit (an error judged only on the
// rows the constants were fitted to understates it); nullopt otherwise.
std::optional<double> carried_allreduce_error(const std::vector<PublishedTable>& tables);

}  // namespace mgpu::stats
