// Purpose: a synthetic hardware probe and all-reduce sweep whose medians are round numbers, so every term of the
// step cost model can be computed by hand (the references in test_step_cost.cpp and tests/analysis/test_predict*.cpp).
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis_fixture.hpp"
#include "results/results_schema.hpp"
#include "results/results_writer.hpp"

namespace mgpu::step_cost_test {

// The model of the tests: 16 -> 8 (hidden) -> 3 (output, no bias): 16*8 + 8 + 8*3 = 160 parameters.
inline const std::vector<int> kWidths = {16, 8, 3};
inline constexpr double kParameters = 160;

// The per-rank identity of analysis_fixture.hpp's configurations, on a standalone measurement.
inline results_schema::MeasurementConditions conditions(int ranks) {
  results_schema::MeasurementConditions c;
  c.device = "cuda";
  c.ranks = ranks;
  c.command_line = "synthetic";
  analysis_test::add_rank_identity(c, ranks);
  return c;
}

// One run (so each median is the value), fp32 only. GEMMs (ms) at batch 16 and 64:
//   L0 forward (m 8, n B, k 16) 0.010, 0.022     L0 weight_grad (m 16, n 8, k B) 0.012, 0.030
//   L1 forward (m 3, n B, k 8)  0.005, 0.011     L1 weight_grad (m 8, n 3, k B)  0.006, 0.009
//   L1 input_grad (m 8, n B, k 3) 0.004, 0.010   square 1000: 2e9 FLOP in 0.1 ms = 20 TFLOP/s
// Copies: 1e6 bytes in 0.001 ms (2 TB/s as 2 x bytes / time), 1e8 bytes in 0.05 ms (4 TB/s).
// Launches: kernel 0.003 ms, graph node 0.0005 ms, graph launch 0.002 ms.
inline results_schema::HardwareProbe probe() {
  results_schema::HardwareProbe p;
  p.conditions = conditions(1);
  p.iterations = 20;
  p.runs = 1;
  p.copy_labels = {"1 MB", "100 MB"};
  p.gemm_precisions = {"fp32"};
  p.launch_labels = {"kernel_launch", "graph_node", "graph_launch"};
  p.copy_bytes = {{2}, {1000000, 100000000}};
  p.copy_ms = {{1, 2}, {0.001, 0.05}};
  p.launch_ms = {{1, 3}, {0.003, 0.0005, 0.002}};
  struct Gemm {
    const char* label;
    long long m, n, k;
    double ms;
  };
  const std::vector<Gemm> gemms = {
      {"t b16 L0 forward", 8, 16, 16, 0.010},     {"t b16 L0 weight_grad", 16, 8, 16, 0.012},
      {"t b16 L1 forward", 3, 16, 8, 0.005},      {"t b16 L1 weight_grad", 8, 3, 16, 0.006},
      {"t b16 L1 input_grad", 8, 16, 3, 0.004},   {"t b64 L0 forward", 8, 64, 16, 0.022},
      {"t b64 L0 weight_grad", 16, 8, 64, 0.030}, {"t b64 L1 forward", 3, 64, 8, 0.011},
      {"t b64 L1 weight_grad", 8, 3, 64, 0.009},  {"t b64 L1 input_grad", 8, 64, 3, 0.010},
      {"square 1000", 1000, 1000, 1000, 0.1}};
  p.gemm_shape.shape = {gemms.size(), 3};
  p.gemm_ms.shape = {1, 1, gemms.size()};
  for (const Gemm& g : gemms) {
    p.gemm_labels.push_back(g.label);
    p.gemm_shape.values.insert(p.gemm_shape.values.end(), {g.m, g.n, g.k});
    p.gemm_ms.values.push_back(g.ms);
  }
  return p;
}

// A 2-rank sweep, one run: 1000 bytes in 0.01 ms, 100,000 bytes in 0.1 ms (rank 1 is the slower, by design: the
// collective's time is its slowest rank's).
inline results_schema::AllreduceSweep sweep() {
  results_schema::AllreduceSweep s;
  // Only what the cost model reads, and what the writer checks against it.
  s.conditions = conditions(2);
  s.runs = 1;
  s.size_labels = {"", ""};
  s.bytes = {{2}, {1000, 100000}};
  s.elements = {{2}, {250, 25000}};
  s.wrong_elements = {{2}, {0, 0}};
  s.time_ms = {{1, 2, 2}, {0.009, 0.09, 0.01, 0.1}};
  s.op_ms = s.time_ms;
  s.algbw_gbps = {{1, 2}, {0.1, 1.0}};
  s.busbw_gbps = s.algbw_gbps;
  return s;
}

// Medium's chain units (the probe's step_labels after "medium b<batch> "), each that the step model may compose.
inline const std::vector<std::string> kMediumChainUnits = {"L0 forward",
                                                           "L1 forward",
                                                           "L2 forward",
                                                           "L3 forward",
                                                           "loss",
                                                           "L3 input_grad",
                                                           "L2 input_grad",
                                                           "L1 input_grad",
                                                           "L3 input_grad fused",
                                                           "L2 input_grad fused",
                                                           "L1 input_grad fused",
                                                           "L0 weight_grad",
                                                           "L1 weight_grad",
                                                           "L2 weight_grad",
                                                           "L3 weight_grad",
                                                           "adam",
                                                           "fused_optimizer",
                                                           "output_head"};

// Both groups in one new file.
inline void write_probe_and_sweep(const std::string& path) {
  write_hardware_probe(path, probe(), false);
  write_allreduce_sweep(path, sweep(), false);
}

}  // namespace mgpu::step_cost_test
