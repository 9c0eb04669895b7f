// Purpose: tests of the all-reduce cost model: the measured curve (slowest rank, median over runs), its interpolation
// in log size with its boundaries, the alpha-beta ring and tree formulas at 2 and 4 ranks against hand-computed values,
// the link fitted to a 2-rank sweep, the named links, and the nodes a sweep ran on.
#include <gtest/gtest.h>

#include <cmath>

#include "platform/error.hpp"
#include "predict/allreduce_cost.hpp"
#include "predict/step_cost_fixture.hpp"

using namespace mgpu;
using namespace mgpu::predict;

namespace {

AllreduceCurve two_points() { return {2, {{1000, 0.01}, {100000, 0.1}}}; }

// 10 GB/s and 5 us: 1e6 bytes take 0.1 ms on the wire.
Link ten_gbs() { return {"test", 10.0, 5.0, "test"}; }

}  // namespace

TEST(AllreduceCost, CurveTakesTheSlowestRankOfEachSize) {
  const AllreduceCurve curve = allreduce_curve(step_cost_test::sweep());
  EXPECT_EQ(curve.ranks, 2);
  ASSERT_EQ(curve.bytes_ms.size(), 2u);
  EXPECT_EQ(curve.bytes_ms[0].first, 1000);
  EXPECT_DOUBLE_EQ(curve.bytes_ms[0].second, 0.01);  // rank 1's 0.01, not rank 0's 0.009
  EXPECT_DOUBLE_EQ(curve.bytes_ms[1].second, 0.1);

  // Rank 0 the slowest: its times, not rank 1's.
  results_schema::AllreduceSweep rank0_slowest = step_cost_test::sweep();
  rank0_slowest.op_ms.values = {0.01, 0.1, 0.009, 0.09};
  const AllreduceCurve from_rank0 = allreduce_curve(rank0_slowest);
  ASSERT_EQ(from_rank0.bytes_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(from_rank0.bytes_ms[0].second, 0.01);
  EXPECT_DOUBLE_EQ(from_rank0.bytes_ms[1].second, 0.1);
}

// The nodes of a sweep: its `nodes` attribute, or for an older file the distinct hosts of its ranks.
TEST(AllreduceCost, CurveKnowsTheNodesItsRanksRanOn) {
  results_schema::AllreduceSweep sweep = step_cost_test::sweep();
  EXPECT_EQ(allreduce_curve(sweep).nodes, 1);  // both ranks on node0
  sweep.conditions.hosts = {"a", "b"};
  EXPECT_EQ(allreduce_curve(sweep).nodes, 2);
  sweep.nodes = 3;  // recorded: it counts
  EXPECT_EQ(allreduce_curve(sweep).nodes, 3);
  sweep.nodes = 0;
  sweep.conditions.hosts.clear();
  EXPECT_EQ(allreduce_curve(sweep).nodes, 1);
}

// The step issues one all-reduce after backward: the curve is each all-reduce timed alone (op_ms), not the
// back-to-back mean (time_ms), which overlaps one call's start-up with the last one's end.
TEST(AllreduceCost, CurveIsTheAllReduceTimedAloneNotTheBackToBackMean) {
  results_schema::AllreduceSweep sweep = step_cost_test::sweep();
  for (double& ms : sweep.op_ms.values) ms += 0.003;
  const AllreduceCurve curve = allreduce_curve(sweep);
  EXPECT_DOUBLE_EQ(curve.bytes_ms[0].second, 0.013);
  EXPECT_DOUBLE_EQ(curve.bytes_ms[1].second, 0.103);
}

// A sweep of one size (`--min-bytes` = `--max-bytes`) is a curve of one point: its time at and below that size, in
// proportion above it.
TEST(AllreduceCost, ASweepOfOneSizeIsACurveOfOnePoint) {
  results_schema::AllreduceSweep sweep = step_cost_test::sweep();
  sweep.bytes.values.resize(1);
  sweep.bytes.shape = {1};
  sweep.op_ms.shape.back() = 1;
  std::vector<double> first;
  for (std::size_t i = 0; i < sweep.op_ms.values.size(); i += 2) first.push_back(sweep.op_ms.values[i]);
  sweep.op_ms.values = first;
  const AllreduceCurve curve = allreduce_curve(sweep);
  ASSERT_EQ(curve.bytes_ms.size(), 1u);
  EXPECT_EQ(curve.bytes_ms[0].first, 1000);
  EXPECT_DOUBLE_EQ(curve.bytes_ms[0].second, 0.01);
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(curve, 500), 0.01);
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(curve, 3000), 0.03);
}

TEST(AllreduceCost, InterpolationIsAPowerLawBetweenNeighbours) {
  // 10,000 bytes is the log midpoint of 1,000 and 100,000: the geometric mean of 0.01 and 0.1.
  EXPECT_NEAR(interpolate_allreduce_ms(two_points(), 10000), std::sqrt(0.01 * 0.1), 1e-12);
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(two_points(), 1000), 0.01);   // exact hit
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(two_points(), 100000), 0.1);  // exact hit
}

TEST(AllreduceCost, BelowTheSweepTheLatencyFloorAboveItTheLargestBandwidth) {
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(two_points(), 10), 0.01);     // clamped
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(two_points(), 999), 0.01);    // clamped
  EXPECT_DOUBLE_EQ(interpolate_allreduce_ms(two_points(), 200000), 0.2);  // proportional to size
  EXPECT_THROW(interpolate_allreduce_ms(two_points(), 0), UsageError);
}

TEST(AllreduceCost, RingAtTwoAndFourRanks) {
  // N = 2: 2 (N-1) alpha = 0.01 ms, 2 (N-1)/N S / beta = 1e6 / 1e10 s = 0.1 ms.
  EXPECT_NEAR(ring_allreduce_ms(1000000, 2, ten_gbs()), 0.11, 1e-12);
  // N = 4: 6 alpha = 0.03 ms, 1.5 x 0.1 ms = 0.15 ms.
  EXPECT_NEAR(ring_allreduce_ms(1000000, 4, ten_gbs()), 0.18, 1e-12);
}

TEST(AllreduceCost, TreeAtTwoAndFourRanks) {
  // 2 ceil(log2 N) alpha + 2 S / beta: N = 2: 0.01 + 0.2; N = 4: 0.02 + 0.2.
  EXPECT_NEAR(tree_allreduce_ms(1000000, 2, ten_gbs()), 0.21, 1e-12);
  EXPECT_NEAR(tree_allreduce_ms(1000000, 4, ten_gbs()), 0.22, 1e-12);
}

TEST(AllreduceCost, TheFasterAlgorithmIsTakenAndOneRankCostsNothing) {
  EXPECT_NEAR(alpha_beta_allreduce_ms(1000000, 4, ten_gbs()), 0.18, 1e-12);  // ring: bandwidth-bound
  // 100 bytes on 4 ranks: ring 0.03 + 1.5e-5, tree 0.02 + 2e-5: the tree's fewer latencies win.
  EXPECT_NEAR(alpha_beta_allreduce_ms(100, 4, ten_gbs()), 0.02002, 1e-12);
  EXPECT_EQ(alpha_beta_allreduce_ms(1000000, 1, ten_gbs()), 0.0);
}

TEST(AllreduceCost, LinkFittedToATwoRankSweep) {
  // 2 alpha = the fastest time 0.01 ms -> 5 us; beta = 1e5 bytes / (0.1 - 0.01) ms = 1.111 GB/s.
  const Link link = link_from_sweep(two_points());
  EXPECT_NEAR(link.latency_us, 5.0, 1e-12);
  EXPECT_NEAR(link.bandwidth_gbs, 1e5 / 0.09e-3 / 1e9, 1e-12);
  // The fitted ring reproduces both measured points on 2 ranks.
  EXPECT_NEAR(ring_allreduce_ms(100000, 2, link), 0.1, 1e-12);
  EXPECT_THROW(link_from_sweep({4, {{1000, 0.01}, {100000, 0.1}}}), UsageError);
}

TEST(AllreduceCost, NamedLinks) {
  // Every listed link at what NVIDIA states NCCL reaches through one such NIC (ib800: twice ib400, assumed), 5 us, its
  // line rate and who states the figure named in its source.
  const std::vector<std::string> names = link_names();
  ASSERT_EQ(names, (std::vector<std::string>{"ib100", "ib200", "ib400", "ib800"}));
  const std::vector<std::pair<int, double>> reached = {{100, 12.0}, {200, 24.0}, {400, 48.0}, {800, 96.0}};
  for (const auto& [gbits, gbs] : reached) {
    const Link link = named_link("ib" + std::to_string(gbits));
    EXPECT_DOUBLE_EQ(link.bandwidth_gbs, gbs) << link.name;
    EXPECT_DOUBLE_EQ(link.latency_us, 5.0) << link.name;
    EXPECT_NE(link.source.find(" " + std::to_string(gbits) + " Gb/s"), std::string::npos) << link.source;
    EXPECT_NE(link.source.find(gbits == 800 ? "assumed" : "stated by NVIDIA"), std::string::npos) << link.source;
  }
  try {
    named_link("ib999");
    FAIL() << "ib999 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'ib999'"), std::string::npos) << e.what();
  }
}
