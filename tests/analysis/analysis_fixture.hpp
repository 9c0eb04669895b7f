// Purpose: synthetic results files for the mgpu_analyze tests, written with the project's own ResultsWriter, whose
// per-step values are chosen so every figure of the report can be computed by hand (the expected values in
// test_report_tables.cpp are derived in comments there).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "results/results_writer.hpp"
#include "stats/run_checks.hpp"

namespace mgpu::analysis_test {

// Global batch 8, 1 warm-up step + 2 measured steps per run; dense_weight_count 1,000,000.
inline constexpr int kGlobalBatch = 8;
inline constexpr int kWarmup = 1;
inline constexpr int kMeasured = 2;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kMaxSmClockMhz = 2000;  // every rank's, in synthetic_metadata

// Hosts, GPU names, UUIDs, PCI bus ids and topology of `ranks` ranks on one node (a configuration's or a standalone
// measurement's: both have these per-rank lists).
template <typename Record>
void add_rank_identity(Record& record, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    record.hosts.push_back("node0");
    record.gpu_names.push_back("GPU");
    record.gpu_uuids.push_back("GPU-" + std::to_string(rank));
    record.gpu_pci_bus_ids.push_back("0000:0" + std::to_string(rank) + ":00.0");
    record.peer_topology.push_back("");
  }
}

inline ConfigurationMetadata synthetic_metadata(const std::string& name, int ranks, int global_batch = kGlobalBatch) {
  ConfigurationMetadata m;
  m.name = name;
  m.configuration.training.model.name = "custom";
  m.configuration.training.model.widths = {16, 8, 3};
  m.configuration.training.model.dropout = 0.0;
  m.parameter_count = 1000008;
  m.dense_weight_count = 1000000;
  m.configuration.training.global_batch = global_batch;
  m.local_batch = global_batch / ranks;
  m.configuration.gpus = ranks;
  m.device = "cuda";
  m.configuration.training.warmup_steps = kWarmup;
  m.configuration.training.measured_steps = kMeasured;
  m.configuration.runs_requested = ranks == 1 ? 6 : 5;
  m.configuration.training.seed = 1;
  m.configuration.training.adam.learning_rate = 1e-3;
  m.configuration.training.adam.beta1 = 0.9;
  m.configuration.training.adam.beta2 = 0.999;
  m.configuration.training.adam.epsilon = 1e-7;
  m.command_line = "synthetic";
  add_rank_identity(m, ranks);
  for (int rank = 0; rank < ranks; ++rank) {
    m.max_sm_clock_mhz.push_back(kMaxSmClockMhz);
    m.max_memory_clock_mhz.push_back(3000);
  }
  return m;
}

// One rank's record: a warm-up step of 100 ms everywhere (it must never count), then two measured steps with the
// given phase times (forward, backward, allreduce, exposed_comm, optimizer, step).
inline RunRecord synthetic_record(const std::vector<std::vector<double>>& measured_phases, double memory_bytes,
                                  double sm_clock_mhz, int clock_samples) {
  RunRecord record(kWarmup + kMeasured);
  for (int p = 0; p < kPhaseCount; ++p) record.ms(Phase(p), 0) = 100.0;
  for (int s = 0; s < kMeasured; ++s)
    for (int p = 0; p < kPhaseCount; ++p) record.ms(Phase(p), kWarmup + s) = measured_phases[s][p];
  record.memory_peak_bytes = memory_bytes;
  record.sm_clock_mhz = sm_clock_mhz;
  record.clock_samples = clock_samples;
  record.throttled = stats::is_throttled(sm_clock_mhz, kMaxSmClockMhz);  // as rank 0 judges it before writing
  return record;
}

// The 1-GPU configuration "single": 6 runs whose two measured steps both take 4, 4, 4, 5, 5 and 40 ms (throughputs
// 2000, 2000, 2000, 1600, 1600, 200 samples/s; the last run is the outlier). Phases of a 4 ms step: forward 1,
// backward 2, optimizer 0.5 (other 0.5); of a 5 ms step: forward 1.5, backward 2, optimizer 0.5 (other 1); of 40 ms:
// forward 30. No clocks recorded. Peak memory 1 GiB, 10 GiB in the outlier run.
inline void add_single(ResultsWriter& writer, const std::string& name = "single") {
  ResultsWriter::Configuration c = writer.add_configuration(synthetic_metadata(name, 1));
  for (const double step : {4.0, 4.0, 4.0, 5.0, 5.0, 40.0}) {
    const double forward = step == 4.0 ? 1.0 : (step == 5.0 ? 1.5 : 30.0);
    const std::vector<double> phases = {forward, 2.0, 0.0, 0.0, 0.5, step};
    const double memory = step == 40.0 ? 10 * 1024 * kMiB : 1024 * kMiB;
    writer.append_run(c, {synthetic_record({phases, phases}, memory, 0.0, 0)});
  }
  writer.finish(c);
}

// The 2-GPU configuration "double" (same identity as "single" but 2 ranks): 5 runs. In each measured step one rank
// takes 2.5 ms (runs 0-2) or 2 ms (runs 3-4) and the other less, and which rank is slower alternates between the two
// steps: the distributed step is the per-step maximum (2.5 or 2 ms), not the maximum of per-rank means. Throughputs
// 3200, 3200, 3200, 4000, 4000 samples/s (MAD = 0: no outlier). Critical rank phases of a 2.5 ms step: forward 1,
// backward 0.5, allreduce 0.6, exposed_comm 0.7, optimizer 0.2 (other 0.1); of a 2 ms step: forward 0.8, backward
// 0.4, allreduce 0.5, exposed_comm 0.5, optimizer 0.2 (other 0.1). The fast rank's phases are all 0.05 (wrong if
// used). Peak memory 2 GiB on rank 0, 3 GiB on rank 1; run 1's rank 1 runs at 1000 of 2000 MHz: throttled.
inline void add_double(ResultsWriter& writer, const std::string& name = "double") {
  ResultsWriter::Configuration c = writer.add_configuration(synthetic_metadata(name, 2));
  for (int run = 0; run < 5; ++run) {
    const bool slow = run < 3;
    const std::vector<double> critical =
        slow ? std::vector<double>{1.0, 0.5, 0.6, 0.7, 0.2, 2.5} : std::vector<double>{0.8, 0.4, 0.5, 0.5, 0.2, 2.0};
    const std::vector<double> fast = {0.05, 0.05, 0.05, 0.05, 0.05, 1.5};
    writer.append_run(c, {synthetic_record({critical, fast}, 2048 * kMiB, 1900, 4),
                          synthetic_record({fast, critical}, 3072 * kMiB, run == 1 ? 1000 : 1900, 4)});
  }
  writer.finish(c);
}

// The 1-GPU configuration "step_only" (as with --timing step): 5 runs of 4 ms steps whose phases were not measured
// (NaN); everything about the step itself is as in "single"'s kept 4 ms runs.
inline void add_step_only(ResultsWriter& writer, const std::string& name = "step_only") {
  ConfigurationMetadata metadata = synthetic_metadata(name, 1);
  metadata.configuration.training.timing = TimingMode::step;
  ResultsWriter::Configuration c = writer.add_configuration(metadata);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int run = 0; run < 5; ++run) {
    const std::vector<double> phases = {nan, nan, nan, nan, nan, 4.0};
    writer.append_run(c, {synthetic_record({phases, phases}, 1024 * kMiB, 0.0, 0)});
  }
  writer.finish(c);
}

// One batch of a synthetic sweep: "b<batch>_n1" (1 GPU) and "b<batch>_n2" (2 GPUs), 5 runs each, every step of run
// r taking step_ms x (1 + d_r) with d = -1%, -0.5%, 0, +0.5%, +1% on both. The same relative spread on both sides
// makes the speedup exactly single_step_ms / double_step_ms (mean of B/(s2(1+d)) over mean of B/(s1(1+d))), with a
// narrow interval around it. Phases: forward 30%, backward 40%, all-reduce = exposed_comm 20% (0 on 1 GPU),
// optimizer 10% of the step.
// multi_ranks: the GPU count of the second configuration ("b<batch>_n<multi_ranks>").
// multi_overlapped: the N-GPU configuration ran with overlap on (deferred, 8 MB buckets), as --overlap auto decides
// from some local batch on; it is then named "..._overlap". with_baseline false: only the N-GPU configuration (its
// 1-GPU baseline already written).
inline void add_sweep_point(ResultsWriter& writer, int global_batch, double single_step_ms, double double_step_ms,
                            int multi_ranks = 2, bool multi_overlapped = false, bool with_baseline = true) {
  for (const int ranks : {1, multi_ranks}) {
    if (ranks == 1 && !with_baseline) continue;
    const double step = ranks == 1 ? single_step_ms : double_step_ms;
    const bool overlapped = ranks > 1 && multi_overlapped;
    ConfigurationMetadata metadata = synthetic_metadata(
        "b" + std::to_string(global_batch) + "_n" + std::to_string(ranks) + (overlapped ? "_overlap" : ""), ranks,
        global_batch);
    if (overlapped) {
      metadata.configuration.training.overlap = true;
      metadata.configuration.training.overlap_order = WeightGradientOrder::deferred;
      metadata.configuration.training.bucket_mb = 8;
    }
    ResultsWriter::Configuration c = writer.add_configuration(metadata);
    for (const double d : {-0.01, -0.005, 0.0, 0.005, 0.01}) {
      const double s = step * (1 + d);
      const double comm = ranks == 1 ? 0.0 : 0.2 * s;
      const std::vector<double> phases = {0.3 * s, 0.4 * s, comm, comm, 0.1 * s, s};
      std::vector<RunRecord> records(ranks, synthetic_record({phases, phases}, 1024 * kMiB, 0.0, 0));
      writer.append_run(c, records);
    }
    writer.finish(c);
  }
}

// A sweep whose 2-GPU speedup crosses 1 between batch 32 and 128: speedups 0.5 (batch 8), 0.8 (32), 1.25 (128) and
// 2 (512). Linear in log(batch) the crossing is at 32 x 4^((1 - 0.8) / (1.25 - 0.8)) = 32 x 4^(4/9) = 59.256; the
// smallest batch whose interval lies above 1 is 128.
inline constexpr double kSweepBreakEven = 59.255982;
inline void add_crossing_sweep(ResultsWriter& writer) {
  add_sweep_point(writer, 8, 1.0, 2.0);
  add_sweep_point(writer, 32, 2.0, 2.5);
  add_sweep_point(writer, 128, 5.0, 4.0);
  add_sweep_point(writer, 512, 16.0, 8.0);
}

// Two trials of batch 8 on 1 and 2 GPUs ("b8_n1_t1", "b8_n2_t1", "b8_n1_t2", "b8_n2_t2", in that order) whose speedups
// disagree at run level: 0.99 in trial 1 and 1.02 in trial 2, each over 5 runs spread ±0.1% (run intervals about
// ±0.1% wide, excluding each other). Over the two trial means the speedup is 1.005 with an interval containing 1.
inline constexpr double kDisagreeingTrialSpeedups[] = {0.99, 1.02};
inline void add_disagreeing_trials(ResultsWriter& writer) {
  for (int trial = 1; trial <= 2; ++trial)
    for (const int ranks : {1, 2}) {
      ConfigurationMetadata metadata =
          synthetic_metadata("b8_n" + std::to_string(ranks) + "_t" + std::to_string(trial), ranks);
      metadata.configuration.trial = trial;
      const double step = ranks == 1 ? 1.0 : 1.0 / kDisagreeingTrialSpeedups[trial - 1];
      ResultsWriter::Configuration c = writer.add_configuration(metadata);
      for (const double d : {-0.001, -0.0005, 0.0, 0.0005, 0.001}) {
        const double s = step * (1 + d);
        const std::vector<double> phases = {0.3 * s, 0.4 * s, 0.0, 0.0, 0.3 * s, s};
        writer.append_run(c, std::vector<RunRecord>(ranks, synthetic_record({phases, phases}, 1024 * kMiB, 0.0, 0)));
      }
      writer.finish(c);
    }
}

// A configuration of `metadata` whose `runs` runs each have two measured steps of `phases` on every rank.
inline void add_steady(ResultsWriter& writer, const ConfigurationMetadata& metadata, const std::vector<double>& phases,
                       int runs) {
  ResultsWriter::Configuration c = writer.add_configuration(metadata);
  const std::vector<RunRecord> ranks(static_cast<std::size_t>(metadata.ranks()),
                                     synthetic_record({phases, phases}, 0, 0, 0));
  for (int run = 0; run < runs; ++run) writer.append_run(c, ranks);
  writer.finish(c);
}

// A 1-GPU configuration `name` as --timing interleaved writes it: runs 0-3 and 5 without marks (phases NaN, steps 4,
// 4.1, 8, 3.9 and 4 ms; 8 an outlier among them), runs 4 and 6 marked (step 5 ms = forward 2 + backward 2 + optimizer
// 0.5 + other 0.5; then 4.5 ms with forward 1.5).
inline void add_interleaved(ResultsWriter& writer, const std::string& name) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ResultsWriter::Configuration c = writer.add_configuration(synthetic_metadata(name, 1));
  const auto append = [&](double step, bool marked, double forward) {
    const std::vector<double> phases = marked ? std::vector<double>{forward, 2.0, 0.0, 0.0, 0.5, step}
                                              : std::vector<double>{nan, nan, nan, nan, nan, step};
    RunRecord record = synthetic_record({phases, phases}, 1024 * kMiB, 0.0, 0);
    record.phases_marked = marked;
    writer.append_run(c, {record});
  };
  for (const double step : {4.0, 4.1, 8.0, 3.9}) append(step, false, 0);
  append(5.0, true, 2.0);
  append(4.0, false, 0);
  append(4.5, true, 1.5);
  writer.finish(c);
}

// A configuration `name` of `ranks` ranks, trial `trial`, whose run r takes step_ms[r] in every measured step on
// every rank (throughput kGlobalBatch / step_ms[r] x 1000 samples/s). Phases: forward 30%, backward 40%, optimizer
// 30% of the step.
inline void add_runs(ResultsWriter& writer, const std::string& name, int ranks, const std::vector<double>& step_ms,
                     int trial = 1) {
  ConfigurationMetadata metadata = synthetic_metadata(name, ranks);
  metadata.configuration.trial = trial;
  ResultsWriter::Configuration c = writer.add_configuration(metadata);
  for (const double s : step_ms) {
    const std::vector<double> phases = {0.3 * s, 0.4 * s, 0.0, 0.0, 0.3 * s, s};
    writer.append_run(c, std::vector<RunRecord>(ranks, synthetic_record({phases, phases}, 1024 * kMiB, 0.0, 0)));
  }
  writer.finish(c);
}

// Six runs of `step_ms` spread by -0.1% to +0.1%; with `outlier`, the last ten times as long, which the modified
// z-score (|M| > 3.5) excludes.
inline std::vector<double> runs_around(double step_ms, bool outlier = false) {
  std::vector<double> runs;
  for (const double d : {-0.001, -0.0005, 0.0, 0.0002, 0.0005, 0.001}) runs.push_back(step_ms * (1 + d));
  if (outlier) runs.back() = 10 * step_ms;
  return runs;
}

// One 1-GPU configuration `name` of add_steady's runs, written to a temporary file named after `stem` and read back
// (the file is removed).
inline ResultsFile steady_results(const std::string& stem, const std::string& name, const std::vector<double>& phases,
                                  int runs) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (stem + "_" + std::to_string(::getpid()) + ".h5")).string();
  {
    ResultsWriter writer(path, true);
    add_steady(writer, synthetic_metadata(name, 1), phases, runs);
    writer.close();
  }
  ResultsFile file = read_results_file(path);
  std::filesystem::remove(path);
  return file;
}

}  // namespace mgpu::analysis_test
