// Purpose: the results-file format (docs/results-format.md describes it): schema version, group, attribute and dataset
// names, units, and the plain structs they map to (a configuration's attributes are configuration_attributes.hpp's
// rows, their roles attribute_roles.hpp's). The writer and every reader (mgpu_analyze) visit these lists instead of
// spelling names themselves, so the format cannot drift between them.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "config/configuration.hpp"
#include "config/settings_table.hpp"
#include "results/configuration_attributes.hpp"
#include "results/run_record.hpp"

namespace mgpu::results_schema {

// A name added after version 1 and the version that added it.
struct AddedName {
  const char* name;
  std::int32_t since_version;
};
// Per-run datasets added after version 1 (for_each_dataset), with the version that added them: a reader of an older
// file that lacks one gets an array of the right shape filled with NaN ("not measured"). Every dataset added to
// for_each_dataset gets a row here; only floating-point datasets can be added this way (NaN needs one).
inline constexpr AddedName kAddedDatasets[] = {
    {"wall_per_step_ms", 3},
    {"phases_marked", 7},
    {"batch_generation_ms", 7},
};
// The format's name: every file in this format says so, whoever wrote it (the PyTorch peer too; see implementation).
inline constexpr char kProducer[] = "mgpu_bench";
// Attributes a reader needs before it knows the rest of the format is one it understands.
inline constexpr char kSchemaVersionAttribute[] = "schema_version";
inline constexpr char kProducerAttribute[] = "producer";
// One subgroup per configuration, named by the caller ("large_b32_n2_cuda").
inline constexpr char kConfigurationsGroup[] = "configurations";
// Every dataset carries these two string attributes.
inline constexpr char kUnitsAttribute[] = "units";
inline constexpr char kDescriptionAttribute[] = "description";

// The schema version that added `name` according to `added` (1 for a name not in it: an original one).
template <std::size_t N>
std::int32_t added_in(const AddedName (&added)[N], std::string_view name) {
  for (const AddedName& entry : added)
    if (name == entry.name) return entry.since_version;
  return 1;
}

// The schema version that added per-run dataset `name` (1 for the original ones).
inline std::int32_t dataset_added_in(std::string_view name) { return added_in(kAddedDatasets, name); }

// Attributes of the other groups (a configuration's progress, a probe) added after version 1, with the version that
// added them; configuration attributes carry theirs in their rows.
inline constexpr AddedName kAddedOtherAttributes[] = {
    {"interrupted", 7}, {"interrupted_utc", 7}, {"step_labels", 8},    {"replica_check", 9}, {"stopped_early", 10},
    {"nodes", 13},      {"gpus_per_node", 13},  {"nics_per_node", 13}, {"network", 13},
};

// The version of the newest change to the format that added no name (a type, a shape, a storage, a meaning): such a
// change bumps it; up to version 12 every change added a name. 16: precision "tf32x3".
inline constexpr std::int32_t kNewestChangeWithoutAName = 16;

// The format's version, which readers check first and refuse when newer: the newest version any row names (a new
// setting's row in config/settings_table.hpp, a dataset's or another attribute's here, bumps it) or
// kNewestChangeWithoutAName.
template <typename Rows, typename Version>
constexpr std::int32_t newest_version(const Rows& rows, Version version_of) {
  return std::apply([&](const auto&... row) { return std::max({std::int32_t(1), version_of(row)...}); }, rows);
}
template <std::size_t N>
constexpr std::int32_t newest_version(const AddedName (&added)[N]) {
  std::int32_t newest = 1;
  for (const AddedName& entry : added) newest = std::max(newest, entry.since_version);
  return newest;
}
inline constexpr std::int32_t kVersion =
    std::max({newest_version(kSettingsTable, [](const auto& row) { return row.facts.since_version; }),
              newest_version(kAttributesBeforeSettings, [](const auto& row) { return row.since_version; }),
              newest_version(kAttributesAfterSettings, [](const auto& row) { return row.since_version; }),
              newest_version(kAddedDatasets), newest_version(kAddedOtherAttributes), kNewestChangeWithoutAName});

struct RootMetadata {
  std::int32_t schema_version = kVersion;
  std::string producer = kProducer;
  std::string project_version;
  std::string git_revision;
  std::string created_utc;  // ISO 8601, "2025-01-31T12:00:00Z"
};

template <typename Root, typename Visitor>  // Root: RootMetadata or const RootMetadata
void for_each_attribute_of_root(Root& root, Visitor&& visit) {
  visit(kSchemaVersionAttribute, root.schema_version);
  visit(kProducerAttribute, root.producer);
  visit("project_version", root.project_version);
  visit("git_revision", root.git_revision);
  visit("created_utc", root.created_utc);
}

// Attributes the writer updates as the configuration runs. All exist from creation, so a reader of an interrupted
// file finds complete = 0 and finished_utc = "" rather than a missing attribute.
struct ConfigurationProgress {
  std::int32_t runs_completed = 0;  // rows of every per-run dataset that hold a finished run
  std::int32_t complete = 0;        // 1 once the benchmark finished the configuration; 0 = running or interrupted
  std::string finished_utc;         // ISO 8601, "" until complete
  // Why the benchmark stopped before completing it ("SIGTERM", "watchdog: rank 1@node7 made no progress"); "" when
  // it was not stopped (complete, running, or killed before it could say: SIGKILL, power). --resume reruns it (v7).
  std::string interrupted;
  std::string interrupted_utc;  // ISO 8601, when it was stopped; "" when not (v7)
  // Whether the ranks' parameters were bit-identical after the runs (comm/replica_check.hpp): "identical on N ranks
  // (...)", "1 rank: nothing to compare", "rank R's parameters differ from rank 0's (...)"; "" until checked, and in
  // a file that predates the check (v9).
  std::string replica_check;
  // Why a complete configuration measured fewer runs than planned (docs/measurement.md, "When a configuration
  // stops"): "noise: ..." (--max-noise) or "time: ..." (--max-time); "" when it ran them all, and in older files (v10).
  std::string stopped_early;
};

template <typename Progress, typename Visitor>
void for_each_attribute_of_progress(Progress& p, Visitor&& visit) {
  visit("runs_completed", p.runs_completed);
  visit("complete", p.complete);
  visit("finished_utc", p.finished_utc);
  visit("interrupted", p.interrupted);
  visit("interrupted_utc", p.interrupted_utc);
  visit("replica_check", p.replica_check);
  visit("stopped_early", p.stopped_early);
}

// ---- Datasets

// A row-major array as stored: shape[0] is the runs dimension for every per-run dataset.
template <typename T>
struct ResultArray {
  using value_type = T;
  std::vector<std::size_t> shape;
  std::vector<T> values;

  // Checked element access: array.at(run, rank, step).
  template <typename... Index>
  const T& at(Index... index) const {
    const std::size_t indices[] = {static_cast<std::size_t>(index)...};
    if (sizeof...(Index) != shape.size()) throw std::out_of_range("ResultArray::at: wrong number of indices");
    std::size_t offset = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (indices[d] >= shape[d]) throw std::out_of_range("ResultArray::at: index out of range");
      offset = offset * shape[d] + indices[d];
    }
    return values[offset];
  }
};

// The shape of a dataset in terms of the configuration's runs, ranks and steps (steps = warm-up + measured).
enum class Extent { runs_ranks_steps, runs_steps, runs_ranks, steps };

struct DatasetSpec {
  std::string name;
  Extent extent;
  std::string units;  // "ms", "bytes", "MHz" or "1"
  std::string description;
};

inline std::vector<std::size_t> extent_shape(Extent extent, std::size_t runs, std::size_t ranks, std::size_t steps) {
  switch (extent) {
    case Extent::runs_ranks_steps:
      return {runs, ranks, steps};
    case Extent::runs_steps:
      return {runs, steps};
    case Extent::runs_ranks:
      return {runs, ranks};
    case Extent::steps:
      return {steps};
  }
  return {};
}

// The phase datasets: kPhaseNames[p] + "_ms", [runs, ranks, steps], each rank's own CUDA-event (or host) times.
inline const std::array<DatasetSpec, kPhaseCount>& phase_datasets() {
  static const std::array<const char*, kPhaseCount> descriptions = {
      "forward pass per rank and step: batch in place -> loss",
      "backward pass per rank and step: loss -> last gradient written",
      "gradient all-reduce per rank and step: first reduction launched -> last complete (communication stream)",
      "communication not hidden by backward per rank and step: backward end -> all reductions complete",
      "optimizer (Adam) update per rank and step",
      "whole training step per rank and step: start -> end; a distributed step takes the max over ranks"};
  static const std::array<DatasetSpec, kPhaseCount> specs = [] {
    std::array<DatasetSpec, kPhaseCount> made;
    for (int p = 0; p < kPhaseCount; ++p)
      made[p] = {std::string(kPhaseNames[p]) + "_ms", Extent::runs_ranks_steps, "ms", descriptions[p]};
    return made;
  }();
  return specs;
}

// Fixed at creation (not per run): 1 for the warm-up steps, which come first and which the analyzer excludes.
inline const DatasetSpec& is_warmup_dataset() {
  static const DatasetSpec spec{"is_warmup", Extent::steps, "1",
                                "1 where the step is a warm-up step (excluded from statistics), 0 where measured"};
  return spec;
}

// Everything appended once per run; the writer builds one with runs = 1, the reader gets all runs.
struct Measurements {
  std::array<ResultArray<double>, kPhaseCount> phase_ms;  // [runs, ranks, steps]
  ResultArray<double> loss;                               // [runs, steps]
  ResultArray<std::int64_t> memory_peak_bytes;            // [runs, ranks]
  ResultArray<double> sm_clock_mhz;                       // [runs, ranks]
  ResultArray<double> memory_clock_mhz;                   // [runs, ranks]
  ResultArray<std::int32_t> clock_samples;                // [runs, ranks]
  ResultArray<std::uint8_t> throttled;                    // [runs, ranks]
  ResultArray<double> wall_per_step_ms;                   // [runs, ranks] (v3; NaN when read from an older file)
  ResultArray<double> phases_marked;                      // [runs, ranks] (v7): 1 or 0; NaN from an older file
  ResultArray<double> batch_generation_ms;                // [runs, ranks] (v7): NaN where not subtracted
};

// Visits (spec, array) for every per-run dataset; the element type of the file dataset is the array's.
template <typename M, typename Visitor>  // M: Measurements, const or not
void for_each_dataset(M& m, Visitor&& visit) {
  for (int p = 0; p < kPhaseCount; ++p) visit(phase_datasets()[p], m.phase_ms[p]);
  static const DatasetSpec loss{"loss", Extent::runs_steps, "1",
                                "MSE loss per run and step: mean over ranks of each rank's local-batch loss"};
  static const DatasetSpec memory{
      "memory_peak_bytes", Extent::runs_ranks, "bytes",
      "peak memory per run and rank: GPU memory in use after the run (all of the GPU's users, "
      "this rank's CUDA context, cuBLAS and NCCL included), or the process's peak RSS so "
      "far (CPU)"};
  static const DatasetSpec sm_clock{"sm_clock_mhz", Extent::runs_ranks, "MHz",
                                    "mean SM clock sampled during the run; 0 = not available"};
  static const DatasetSpec memory_clock{"memory_clock_mhz", Extent::runs_ranks, "MHz",
                                        "mean memory clock sampled during the run; 0 = not available"};
  static const DatasetSpec samples{"clock_samples", Extent::runs_ranks, "1",
                                   "number of clock samples behind sm_clock_mhz and memory_clock_mhz"};
  static const DatasetSpec throttled{"throttled", Extent::runs_ranks, "1",
                                     "1 when the run's mean SM clock is below 75% of the rank's max_sm_clock_mhz "
                                     "(both known), else 0"};
  visit(loss, m.loss);
  visit(memory, m.memory_peak_bytes);
  visit(sm_clock, m.sm_clock_mhz);
  visit(memory_clock, m.memory_clock_mhz);
  visit(samples, m.clock_samples);
  static const DatasetSpec wall_per_step{"wall_per_step_ms", Extent::runs_ranks, "ms",
                                         "wall time per measured step per run and rank: first measured step's start "
                                         "-> last measured step's end (CUDA events on the GPU, the steady clock on "
                                         "the CPU), gaps between steps included, divided by the measured steps; "
                                         "comparable between --timing modes (v2; NaN = not measured)"};
  static const DatasetSpec phases_marked{"phases_marked", Extent::runs_ranks, "1",
                                         "1 where the run marked every phase of every step (its phase times are "
                                         "measured; each mark slows the step), 0 where it did not (--timing step: "
                                         "each step's start and end; none and interleaved's unmarked runs: no mark "
                                         "inside the steps, step_ms = wall span / measured steps - "
                                         "batch_generation_ms); throughput comes from the 0 runs where a "
                                         "configuration has both (v7; NaN = older file, one kind of run)"};
  static const DatasetSpec batch_generation{"batch_generation_ms", Extent::runs_ranks, "ms",
                                            "per step, the step's bookkeeping and batch generation timed alone "
                                            "after the run (back-to-back, as in the step) and subtracted from the "
                                            "wall span of a run without marks inside its steps (v7; NaN = not "
                                            "subtracted: the run's marks leave it outside the step)"};
  visit(throttled, m.throttled);
  visit(wall_per_step, m.wall_per_step_ms);
  visit(phases_marked, m.phases_marked);
  visit(batch_generation, m.batch_generation_ms);
}

// ---- Standalone measurements (v2): top-level groups next to /configurations, each written whole by one command
// (`mgpu_bench allreduce`, `mgpu_bench probe`) into a new results file or an existing one of this schema version.

inline constexpr char kAllreduceGroup[] = "allreduce";
inline constexpr char kProbeGroup[] = "probe";

// Where a standalone measurement ran; the names and meanings are the configuration attributes' of the same names.
struct MeasurementConditions : RanksAndLibraries {
  std::string implementation = kImplementation;
  std::string device;  // "cuda" or "cpu"
  std::int32_t ranks = 0;
  std::string nccl_algo = kNcclDefault;  // NCCL_ALGO and NCCL_PROTO in effect, as a configuration records them
  std::string nccl_proto = kNcclDefault;
  std::vector<std::string> nccl_environment;
  std::string command_line;
  std::string started_utc;   // the writer fills it in when empty
  std::string finished_utc;  // the writer fills it in when empty
};

template <typename Conditions, typename Visitor>
void for_each_attribute_of_conditions(Conditions& c, Visitor&& visit) {
  visit("implementation", c.implementation);
  visit("device", c.device);
  visit("ranks", c.ranks);
  visit(attribute_of(&Configuration::nccl_algo), c.nccl_algo);
  visit(attribute_of(&Configuration::nccl_proto), c.nccl_proto);
  visit("nccl_environment", c.nccl_environment);
  visit("command_line", c.command_line);
  visit("started_utc", c.started_utc);
  visit("finished_utc", c.finished_utc);
  for_each_library_and_rank_attribute(c, visit);
}

// A dataset of a standalone group: written whole, its shape given by the arrays the producer fills.
struct FixedDatasetSpec {
  std::string name;
  std::string units;  // "ms", "bytes", "GB/s" or "1"
  std::string description;
};

// /allreduce: the standalone all-reduce sweep (docs/measurement.md: algbw = bytes / t, busbw = algbw x 2(N-1)/N).
struct AllreduceSweep {
  MeasurementConditions conditions;
  std::string dtype;                   // "fp32" or "bf16"
  std::string timed_operation;         // "ncclAvg in place" (what the training step does) or "MPI_SUM in place" (CPU)
  std::string data_check;              // which exact checks ran, e.g. "ncclSum out of place (small integers: exact)..."
  std::int32_t data_check_passed = 0;  // 1 when every element of every check at every size was right
  std::int32_t iterations = 0;         // back-to-back all-reduces per timed run
  std::int32_t warmup_iterations = 0;  // untimed all-reduces before each timed run
  std::int32_t runs = 0;
  // Where the ranks ran (v13; 0 in an older file: its hosts say): distinct hosts, the most ranks on one host, and the
  // network adapters NCCL's topology of rank 0's node lists (0: not reported, as on the CPU fallback); `network`
  // says where the count came from and names the adapters.
  std::int32_t nodes = 0;
  std::int32_t gpus_per_node = 0;
  std::int32_t nics_per_node = 0;
  std::string network;
  std::vector<std::string> size_labels;      // [sizes]: "" or e.g. "large gradient" (a --model gradient's exact size)
  ResultArray<std::int64_t> bytes;           // [sizes]
  ResultArray<std::int64_t> elements;        // [sizes]
  ResultArray<double> time_ms;               // [runs, ranks, sizes]: N back-to-back all-reduces / N, this rank's events
  ResultArray<double> op_ms;                 // [runs, ranks, sizes]: mean of the same N, each timed by its own events
  ResultArray<double> algbw_gbps;            // [runs, sizes]: bytes / max over ranks of time_ms
  ResultArray<double> busbw_gbps;            // [runs, sizes]: algbw x 2(N-1)/N
  ResultArray<std::int64_t> wrong_elements;  // [sizes]: elements wrong in any check (0 = exact)
};

template <typename Sweep, typename Visitor>
void for_each_attribute_of_allreduce(Sweep& s, Visitor&& visit) {
  for_each_attribute_of_conditions(s.conditions, visit);
  visit("dtype", s.dtype);
  visit("timed_operation", s.timed_operation);
  visit("data_check", s.data_check);
  visit("data_check_passed", s.data_check_passed);
  visit("iterations", s.iterations);
  visit("warmup_iterations", s.warmup_iterations);
  visit("runs", s.runs);
  visit("nodes", s.nodes);
  visit("gpus_per_node", s.gpus_per_node);
  visit("nics_per_node", s.nics_per_node);
  visit("network", s.network);
  visit("size_labels", s.size_labels);
}

template <typename Sweep, typename Visitor>
void for_each_dataset_of_allreduce(Sweep& s, Visitor&& visit) {
  static const FixedDatasetSpec bytes{"bytes", "bytes", "message size per rank of each all-reduce [sizes]"};
  static const FixedDatasetSpec elements{"elements", "1", "elements per rank of each all-reduce [sizes]"};
  static const FixedDatasetSpec time{"time_ms", "ms",
                                     "per all-reduce [runs, ranks, sizes]: iterations back-to-back all-reduces "
                                     "between two CUDA events on the stream (host clock on the CPU), divided by "
                                     "iterations"};
  static const FixedDatasetSpec op{"op_ms", "ms",
                                   "per all-reduce [runs, ranks, sizes]: mean over the iterations of each all-reduce "
                                   "timed between its own two events (as the training step times its reduction)"};
  static const FixedDatasetSpec algbw{"algbw_gbps", "GB/s",
                                      "algorithm bandwidth [runs, sizes]: bytes / max over ranks of time_ms, "
                                      "decimal GB/s"};
  static const FixedDatasetSpec busbw{"busbw_gbps", "GB/s", "bus bandwidth [runs, sizes]: algbw x 2(ranks-1)/ranks"};
  static const FixedDatasetSpec wrong{"wrong_elements", "1",
                                      "elements of the result that differ from the expected value in any data "
                                      "check [sizes]; 0 = every element right"};
  visit(bytes, s.bytes);
  visit(elements, s.elements);
  visit(time, s.time_ms);
  visit(op, s.op_ms);
  visit(algbw, s.algbw_gbps);
  visit(busbw, s.busbw_gbps);
  visit(wrong, s.wrong_elements);
}

// /probe: the hardware's own rates on one GPU, the floors of docs/performance.md.
struct HardwareProbe {
  MeasurementConditions conditions;  // ranks = 1
  std::int32_t iterations = 0;       // operations per timed graph replay
  std::int32_t runs = 0;
  std::vector<std::string> copy_labels;      // [copies]
  std::vector<std::string> gemm_labels;      // [gemms]: "large b32 L0 forward", ..., "square 8192"
  std::vector<std::string> gemm_precisions;  // [precisions]: "fp32", "tf32", "bf16"
  std::vector<std::string> launch_labels;    // [launches]: "kernel_launch", "graph_node", "graph_launch"
  ResultArray<std::int64_t> copy_bytes;      // [copies]
  ResultArray<double> copy_ms;               // [runs, copies]: one device-to-device copy
  ResultArray<std::int64_t> gemm_shape;      // [gemms, 3]: m, n, k (FLOPs = 2 m n k)
  ResultArray<double> gemm_ms;               // [runs, precisions, gemms]: one GEMM
  ResultArray<double> launch_ms;             // [runs, launches]: one empty kernel, launched as labelled
  // The step's own work per layer at each probed shape, fp32, as the step enqueues it (CudaMlp: the tuned GEMM with
  // what it folds, the kernels it does not): "large b32 L1 forward", "... L1 input_grad", "... L1 input_grad fused",
  // "... L1 weight_grad", "large b32 loss", "large b32 output_head", "large b32 adam", "large b32 fused_optimizer".
  // Since version 8; empty in an older probe.
  std::vector<std::string> step_labels;  // [steps]
  ResultArray<double> step_ms;           // [runs, steps]
};

template <typename Probe, typename Visitor>
void for_each_attribute_of_probe(Probe& p, Visitor&& visit) {
  for_each_attribute_of_conditions(p.conditions, visit);
  visit("iterations", p.iterations);
  visit("runs", p.runs);
  visit("copy_labels", p.copy_labels);
  visit("gemm_labels", p.gemm_labels);
  visit("gemm_precisions", p.gemm_precisions);
  visit("launch_labels", p.launch_labels);
  visit("step_labels", p.step_labels);
}

template <typename Probe, typename Visitor>
void for_each_dataset_of_probe(Probe& p, Visitor&& visit) {
  static const FixedDatasetSpec copy_bytes{"copy_bytes", "bytes", "bytes of each device-to-device copy [copies]"};
  static const FixedDatasetSpec copy{"copy_ms", "ms",
                                     "one cudaMemcpyAsync device-to-device [runs, copies] (graph of iterations "
                                     "copies over rotating buffers, replay time / iterations); bandwidth = 2 x "
                                     "bytes / time (read + write)"};
  static const FixedDatasetSpec shape{"gemm_shape", "1", "m, n, k of each cuBLAS GEMM [gemms, 3]; FLOPs = 2 m n k"};
  static const FixedDatasetSpec gemm{"gemm_ms", "ms",
                                     "one cuBLAS GEMM [runs, precisions, gemms] (graph of iterations GEMMs, replay "
                                     "time / iterations)"};
  static const FixedDatasetSpec launch{"launch_ms", "ms",
                                       "one empty kernel [runs, launches]: kernel_launch = back-to-back stream "
                                       "launches, graph_node = a node of one graph, graph_launch = a one-node graph "
                                       "launched back-to-back"};
  visit(copy_bytes, p.copy_bytes);
  visit(copy, p.copy_ms);
  visit(shape, p.gemm_shape);
  visit(gemm, p.gemm_ms);
  visit(launch, p.launch_ms);
  static const FixedDatasetSpec step{"step_ms", "ms",
                                     "one unit of the training step's own work [runs, steps] (fp32, as the step "
                                     "enqueues it; graph of iterations units, replay time / iterations; since version "
                                     "8)"};
  visit(step, p.step_ms);
}

}  // namespace mgpu::results_schema
