// Purpose: the time of one gradient all-reduce for the step cost model (docs/prediction.md): from a measured sweep at
// that rank count (interpolated in log size), else from the latency-bandwidth (alpha-beta) model of ring and tree
// all-reduce with a link's measured or stated bandwidth and latency.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "results/results_schema.hpp"

namespace mgpu::predict {

// A measured all-reduce curve: per message size, the median over runs of the slowest rank's time of one all-reduce
// timed alone (the sweep's op_ms), and the nodes its ranks ran on.
struct AllreduceCurve {
  int ranks = 0;
  std::vector<std::pair<long long, double>> bytes_ms;  // ascending bytes
  int nodes = 1;
};

// From a stored sweep (`mgpu_bench allreduce`); UsageError when it has no size or a non-positive time. Its nodes are
// the sweep's `nodes`, or for a file that predates it the distinct hosts of its ranks.
AllreduceCurve allreduce_curve(const results_schema::AllreduceSweep& sweep);

// Time at `bytes`, power law (linear in log time against log size) between the two measured neighbours; below the
// smallest size the smallest's time (the latency floor); above the largest, the largest's time scaled by the size
// ratio (its bandwidth held). UsageError for bytes <= 0.
double interpolate_allreduce_ms(const AllreduceCurve& curve, long long bytes);

// One link of the alpha-beta cost model: bandwidth per direction between neighbours (decimal GB/s) and one message's
// latency (us). `source` says where the figures came from, for the output.
struct Link {
  std::string name;
  double bandwidth_gbs = 0;
  double latency_us = 0;
  std::string source;
};

// The named links (`--link`): one InfiniBand NIC of 100, 200, 400 (NDR) or 800 Gb/s (XDR) at the bandwidth NVIDIA
// states NCCL reaches through it (12, 24 and 48 GB/s; ib800 assumed twice ib400), 5 us per message (assumed). Without
// a cluster shape one such NIC per GPU joins every GPU to the others. UsageError naming an unknown name.
Link named_link(const std::string& name);
std::vector<std::string> link_names();

// A link from a measured 2-rank sweep: on 2 ranks a ring all-reduce is one exchange, t(S) = 2 alpha + S / beta, so
// alpha = (the sweep's fastest time) / 2 and beta = largest size / (its time - 2 alpha). UsageError unless ranks == 2.
Link link_from_sweep(const AllreduceCurve& two_rank_curve);

// Ring (reduce-scatter + all-gather): 2 (N-1) alpha + 2 (N-1)/N S / beta.
double ring_allreduce_ms(long long bytes, int ranks, const Link& link);
// Pipelined binary tree (reduce + broadcast): 2 ceil(log2 N) alpha + 2 S / beta.
double tree_allreduce_ms(long long bytes, int ranks, const Link& link);
// The faster of the two (NCCL picks per size), 0 on one rank.
double alpha_beta_allreduce_ms(long long bytes, int ranks, const Link& link);

}  // namespace mgpu::predict
