// Purpose: measured all-reduce curves and the alpha-beta cost model of ring and tree all-reduce (allreduce_cost.hpp).
#include "predict/allreduce_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "platform/error.hpp"
#include "platform/sample_median.hpp"
#include "results/attribute_text.hpp"

namespace mgpu::predict {
namespace {

void check_ranks(int ranks) {
  if (ranks < 1) throw UsageError("all-reduce cost model: " + std::to_string(ranks) + " ranks: expected at least 1");
}

}  // namespace

AllreduceCurve allreduce_curve(const results_schema::AllreduceSweep& sweep) {
  AllreduceCurve curve;
  curve.ranks = sweep.conditions.ranks;
  // Each all-reduce timed alone between its own events (op_ms), as the step issues its reduction: one, after
  // backward. The back-to-back figure (time_ms) overlaps one call's start-up with the previous one's end: 3 us less
  // per all-reduce of 1 MB to 27.5 MB on 2 x H100.
  const results_schema::ResultArray<double>& times = sweep.op_ms;
  const std::size_t runs = times.shape.at(0), ranks = times.shape.at(1);
  const std::size_t sizes = times.shape.at(2);
  if (sizes == 0 || runs == 0) throw UsageError("all-reduce sweep: no measured size");
  for (std::size_t s = 0; s < sizes; ++s) {
    // A collective ends when its slowest rank does.
    std::vector<double> slowest(runs, 0.0);
    for (std::size_t run = 0; run < runs; ++run)
      for (std::size_t rank = 0; rank < ranks; ++rank) slowest[run] = std::max(slowest[run], times.at(run, rank, s));
    const double ms = median(slowest);
    if (!(ms > 0) || !std::isfinite(ms))
      throw UsageError("all-reduce sweep: time " + shortest_double_text(ms) + " ms at " +
                       std::to_string(sweep.bytes.values.at(s)) + " bytes is not a positive number");
    curve.bytes_ms.emplace_back(sweep.bytes.values.at(s), ms);
  }
  std::sort(curve.bytes_ms.begin(), curve.bytes_ms.end());
  const std::set<std::string> hosts(sweep.conditions.hosts.begin(), sweep.conditions.hosts.end());
  curve.nodes = sweep.nodes > 0 ? sweep.nodes : std::max<int>(1, int(hosts.size()));
  return curve;
}

double interpolate_allreduce_ms(const AllreduceCurve& curve, long long bytes) {
  if (bytes <= 0)
    throw UsageError("all-reduce cost model: " + std::to_string(bytes) + " bytes: expected a positive size");
  if (curve.bytes_ms.empty()) throw UsageError("all-reduce cost model: the measured curve is empty");
  const auto& points = curve.bytes_ms;
  if (bytes <= points.front().first) return points.front().second;
  if (bytes >= points.back().first) return points.back().second * double(bytes) / double(points.back().first);
  const auto above = std::lower_bound(points.begin(), points.end(), std::make_pair(bytes, 0.0));
  if (above->first == bytes) return above->second;
  const auto below = above - 1;
  const double fraction = std::log(double(bytes) / below->first) / std::log(double(above->first) / below->first);
  return std::exp(std::log(below->second) + fraction * std::log(above->second / below->second));
}

std::vector<std::string> link_names() { return {"ib100", "ib200", "ib400", "ib800"}; }

Link named_link(const std::string& name) {
  // Per NIC: its line rate (Gb/s), what NCCL reaches through it (GB/s a direction) and who states that. NVIDIA puts
  // the peak at 12 and 24 GB/s for 100G and 200G NICs (nccl-tests #119) and at 46-49 GB/s for NDR 400G (#290, #319).
  struct Rate {
    int line_gbits;
    double reached_gbs;
    const char* stated_by;
  };
  static const std::map<std::string, Rate> rates = {
      {"ib100", {100, 12.0, "stated by NVIDIA, nccl-tests #119"}},
      {"ib200", {200, 24.0, "stated by NVIDIA, nccl-tests #119"}},
      {"ib400", {400, 48.0, "stated by NVIDIA, nccl-tests #290 and #319"}},
      {"ib800", {800, 96.0, "assumed: twice ib400's, no published figure"}}};
  const auto found = rates.find(name);
  if (found == rates.end()) {
    std::string known;
    for (const std::string& n : link_names()) known += (known.empty() ? "" : ", ") + n;
    throw UsageError("--link '" + name + "': unknown link (known: " + known + ")");
  }
  Link link;
  link.name = name;
  link.bandwidth_gbs = found->second.reached_gbs;
  link.latency_us = 5.0;
  link.source = "one " + std::to_string(found->second.line_gbits) +
                " Gb/s InfiniBand NIC: " + shortest_double_text(link.bandwidth_gbs) + " GB/s (" +
                found->second.stated_by + "), 5 us per message (assumed)";
  return link;
}

Link link_from_sweep(const AllreduceCurve& curve) {
  if (curve.ranks != 2)
    throw UsageError("all-reduce cost model: a link is derived from a 2-rank sweep, this one has " +
                     std::to_string(curve.ranks) + " ranks");
  if (curve.bytes_ms.size() < 2) throw UsageError("all-reduce cost model: a link needs a sweep of at least 2 sizes");
  // The latency floor: the fastest of the small messages (the very smallest is often not the fastest).
  double two_alpha_ms = curve.bytes_ms.front().second;
  for (const auto& point : curve.bytes_ms) two_alpha_ms = std::min(two_alpha_ms, point.second);
  const auto& [largest_bytes, largest_ms] = curve.bytes_ms.back();
  if (!(largest_ms > two_alpha_ms))
    throw UsageError("all-reduce cost model: the sweep's largest size is not slower than its smallest; no bandwidth");
  Link link;
  link.name = "fitted to the 2-rank sweep";
  link.latency_us = two_alpha_ms / 2 * 1e3;
  link.bandwidth_gbs = largest_bytes / ((largest_ms - two_alpha_ms) * 1e-3) / 1e9;
  link.source = "alpha = fastest time / 2, beta = largest size / (its time - 2 alpha)";
  return link;
}

double ring_allreduce_ms(long long bytes, int ranks, const Link& link) {
  check_ranks(ranks);
  const double n = ranks;
  return 2 * (n - 1) * link.latency_us * 1e-3 + 2 * (n - 1) / n * bytes / (link.bandwidth_gbs * 1e9) * 1e3;
}

double tree_allreduce_ms(long long bytes, int ranks, const Link& link) {
  check_ranks(ranks);
  const double depth = std::ceil(std::log2(double(ranks)));
  return 2 * depth * link.latency_us * 1e-3 + (ranks > 1 ? 2.0 * bytes / (link.bandwidth_gbs * 1e9) * 1e3 : 0.0);
}

double alpha_beta_allreduce_ms(long long bytes, int ranks, const Link& link) {
  if (ranks == 1) return 0;
  return std::min(ring_allreduce_ms(bytes, ranks, link), tree_allreduce_ms(bytes, ranks, link));
}

}  // namespace mgpu::predict
