// Purpose: the results-file format in one place (docs/results-format.md describes it): schema version, group, attribute
// and dataset names, units, and the plain structs they map to. The writer and every reader (mgpu_analyze) visit these
// lists instead of spelling names themselves, so the format cannot drift between them.
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
#include "results/run_record.hpp"
#include "results/setting_attribute.hpp"

namespace mgpu::results_schema {

using mgpu::AttributeRole;  // a configuration attribute's role in pairing (config/settings_table.hpp)

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
// Which code measured a configuration or a standalone measurement ("implementation" attribute): this program, or the
// PyTorch peer (bench/peers/), which writes "pytorch-ddp", "pytorch-graph" or "pytorch-graph-dp".
inline constexpr char kImplementation[] = "mgpu_bench";
// Attributes a reader needs before it knows the rest of the format is one it understands.
inline constexpr char kSchemaVersionAttribute[] = "schema_version";
inline constexpr char kProducerAttribute[] = "producer";
// One subgroup per configuration, named by the caller ("large_b32_n2_cuda").
inline constexpr char kConfigurationsGroup[] = "configurations";
// Every dataset carries these two string attributes.
inline constexpr char kUnitsAttribute[] = "units";
inline constexpr char kDescriptionAttribute[] = "description";
// The value of the NCCL algo/proto attributes that means "the library decides" ("n/a", not applicable, is
// kNotApplicable of setting_attribute.hpp).
inline constexpr char kNcclDefault[] = "default";
// The NCCL settings' attributes (compare --ignore-nccl-settings leaves them out of its identity).
inline constexpr char kNcclAlgoAttribute[] = "nccl_algo";
inline constexpr char kNcclProtoAttribute[] = "nccl_proto";
// docs/measurement.md: a run whose mean SM clock is below this fraction of the rank's maximum SM clock is throttled.
inline constexpr double kThrottleFraction = 0.75;
// 0 stands for "unknown" in both clocks, and an unknown clock never flags a run.
inline bool is_throttled(double mean_sm_clock_mhz, double max_sm_clock_mhz) {
  return mean_sm_clock_mhz > 0 && max_sm_clock_mhz > 0 && mean_sm_clock_mhz < kThrottleFraction * max_sm_clock_mhz;
}

// The schema version that added `name` according to `added` (1 for a name not in it: an original one).
template <std::size_t N>
std::int32_t added_in(const AddedName (&added)[N], std::string_view name) {
  for (const AddedName& entry : added)
    if (name == entry.name) return entry.since_version;
  return 1;
}

// The schema version that added per-run dataset `name` (1 for the original ones).
inline std::int32_t dataset_added_in(std::string_view name) { return added_in(kAddedDatasets, name); }

// ---- Attributes: each struct below is written and read through its for_each_* list or attribute rows, the only
// place its names live.

// The settings a file of schema version 1 implies for every attribute it lacks: the defaults of a resolved
// configuration, but the step not captured as a graph (graphs came in version 2).
inline Configuration version_one_configuration() {
  Configuration configuration;
  configuration.training.graph = false;
  return configuration;
}

// What a configuration is and where it ran; written once when its group is created.
struct ConfigurationMetadata {
  std::string name;                              // the group name under /configurations (not an attribute)
  std::string implementation = kImplementation;  // which code measured it (v2)
  // Every setting of the configuration, typed: the model, batch, GPU count, trial and every step setting, steps, runs
  // and Adam (the rows of config/settings_table.hpp), each one attribute of its name in the file's
  // vocabulary (setting_attribute.hpp). What the file does not record (the stopping rules, the GEMM plan) reads as
  // its default; the reader fills in training.runs.
  Configuration configuration = version_one_configuration();
  // Facts of the model and batch, recorded for readers of the file (record_configuration fills them).
  std::int64_t parameter_count = 0;
  std::int64_t dense_weight_count = 0;  // weights of the dense layers, no biases
  std::int32_t local_batch = 0;
  std::string batch_mode = "global";        // "global": --batch split across ranks (docs/measurement.md)
  std::string environment_preset = "none";  // launch/presets name the launcher applied (MGPU_ENVIRONMENT_PRESET)
  std::int32_t attempt = 1;  // 1; n + 1 when --resume replaced an incomplete n-th attempt of this configuration
  std::string device;        // "cuda" or "cpu"
  // What ran each GEMM shape on rank 0 (configuration.training.gemm_tuning says how it was chosen), one line per
  // shape, empty on the CPU fallback (v6; a condition, not part of the identity).
  std::string gemm_choices;
  // How rank 0's step ran, as set-up chose it (--step-kernel; v17): "chain" or "persistent"; "" on the CPU fallback,
  // for the PyTorch peer and in a file that predates it.
  std::string step_kernel_chosen;
  // GEMM candidates rank 0's set-up compared with the float64 product before timing them, and those it rejected
  // (never chosen); 0 on the CPU fallback (v10).
  std::int32_t gemm_candidates_checked = 0;
  std::int32_t gemm_candidates_rejected = 0;
  // The math check (docs/measurement.md, "Math check"; v10): "passed: ..." or "FAILED: ..." (math_check_verdict), ""
  // in a file that predates it; each rank's relative error (||p - p_ref|| / ||p_ref - p_0|| after math_check_steps
  // steps), the tolerance, and the check's wall time (the slowest rank's).
  std::string math_check;
  std::vector<double> math_check_errors;
  double math_check_tolerance = 0.0;
  std::int32_t math_check_steps = 0;
  double math_check_seconds = 0.0;
  // What the job printed that its runs do not say (v15), so that `mgpu_bench replay` re-makes its console from the
  // file: rank 0's set-up line ("0.07 s on rank 0"), how its unique id reached the ranks ("" on one rank), the job's
  // notice ("" without one: the CPU fallback chosen without being asked for) and the job's plan ("2 configurations,
  // 124 runs"; "" for a job of one configuration). "" in a file that predates them.
  std::string setup;
  std::string unique_id_check;
  std::string job_notice;
  std::string job_plan;
  std::string nccl_algo = kNcclDefault;
  std::string nccl_proto = kNcclDefault;
  std::vector<std::string> nccl_environment;  // "NAME=value" for every NCCL_* variable in effect
  std::string command_line;
  std::string started_utc;  // ISO 8601; the writer fills it in when empty
  std::string cuda_runtime_version = kNotApplicable;
  std::string cuda_driver_version = kNotApplicable;
  std::string cublas_version = kNotApplicable;
  std::string nccl_version = kNotApplicable;
  std::string mpi_library_version = kNotApplicable;
  // One entry per rank, in rank order.
  std::vector<std::string> hosts;
  std::vector<std::string> gpu_names;
  std::vector<std::string> gpu_uuids;
  std::vector<std::string> gpu_pci_bus_ids;
  std::vector<std::string> peer_topology;    // this rank's GPU to every other rank's: NVLink/PCIe path, P2P access
  std::vector<double> max_sm_clock_mhz;      // 0 = unknown
  std::vector<double> max_memory_clock_mhz;  // 0 = unknown

  const TrainingSettings& training() const { return configuration.training; }
  int ranks() const { return configuration.gpus; }
  int global_batch() const { return configuration.training.global_batch; }
  int total_steps() const { return configuration.training.total_steps(); }
};

// One attribute of a configuration that is no setting of its Configuration (those are the rows of
// config/settings_table.hpp): its name, its role in pairing, the schema version that added it (never changes) and
// where it is (Get: from a ConfigurationMetadata, const or not; the library and rank rows from a
// MeasurementConditions too).
template <typename Get>
struct MetadataAttribute {
  const char* name;
  AttributeRole role;
  std::int32_t since_version;
  Get get;
};
template <typename Get>
constexpr MetadataAttribute<Get> attribute(const char* name, AttributeRole role, std::int32_t since_version, Get get) {
  return {name, role, since_version, get};
}

// visit(row) for every row of a tuple of attribute rows.
template <typename Rows, typename Visit>
void for_each_row(const Rows& rows, Visit&& visit) {
  std::apply([&](const auto&... row) { (visit(row), ...); }, rows);
}

// Visited before the settings: whether this program chose the GEMMs (gemm_tuning's Applies::with_own_gemms) is read
// from them.
inline constexpr auto kAttributesBeforeSettings =
    std::make_tuple(attribute(
                        "implementation", kScaled, 2, [](auto& m) -> auto& { return m.implementation; }),
                    attribute(
                        "device", kScaled, 1, [](auto& m) -> auto& { return m.device; }));

// The library versions and the per-rank identity, recorded both with a configuration and with a standalone group: one
// list, visited at the same place in both (the roles are a configuration's). The software and hardware are reported,
// not paired on, so a driver or library change still pairs in compare.
inline constexpr auto kLibraryAndRankAttributes =
    std::make_tuple(attribute(
                        "cuda_runtime_version", kSetting, 1, [](auto& r) -> auto& { return r.cuda_runtime_version; }),
                    attribute(
                        "cuda_driver_version", kSetting, 1, [](auto& r) -> auto& { return r.cuda_driver_version; }),
                    attribute(
                        "cublas_version", kSetting, 1, [](auto& r) -> auto& { return r.cublas_version; }),
                    attribute(
                        "nccl_version", kSetting, 1, [](auto& r) -> auto& { return r.nccl_version; }),
                    attribute(
                        "mpi_library_version", kSetting, 1, [](auto& r) -> auto& { return r.mpi_library_version; }),
                    attribute(
                        "hosts", kCondition, 1, [](auto& r) -> auto& { return r.hosts; }),
                    attribute(
                        "gpu_names", kSetting, 1, [](auto& r) -> auto& { return r.gpu_names; }),
                    attribute(
                        "gpu_uuids", kCondition, 1, [](auto& r) -> auto& { return r.gpu_uuids; }),
                    attribute(
                        "gpu_pci_bus_ids", kCondition, 1, [](auto& r) -> auto& { return r.gpu_pci_bus_ids; }),
                    attribute(
                        "peer_topology", kCondition, 1, [](auto& r) -> auto& { return r.peer_topology; }));

template <typename Record, typename Visitor>  // Record: ConfigurationMetadata or MeasurementConditions, const or not
void for_each_library_and_rank_attribute(Record& r, Visitor&& visit) {
  for_each_row(kLibraryAndRankAttributes, [&](const auto& row) { visit(row.name, row.get(r)); });
}

// Visited after the settings.
inline constexpr auto kAttributesAfterSettings = std::tuple_cat(
    std::make_tuple(
        // Facts of the model and batch, which follow from the scaled settings.
        attribute(
            "parameter_count", kSetting, 1, [](auto& m) -> auto& { return m.parameter_count; }),
        attribute(
            "dense_weight_count", kSetting, 1, [](auto& m) -> auto& { return m.dense_weight_count; }),
        attribute(
            "local_batch", kSetting, 1, [](auto& m) -> auto& { return m.local_batch; }),
        attribute(
            "batch_mode", kScaled, 1, [](auto& m) -> auto& { return m.batch_mode; }),
        // The NCCL settings and preset pair N-GPU configurations with each other, never with their baseline.
        attribute(
            "environment_preset", kCompared, 2, [](auto& m) -> auto& { return m.environment_preset; }),
        attribute(
            "attempt", kCondition, 2, [](auto& m) -> auto& { return m.attempt; }),
        attribute(
            "gemm_choices", kCondition, 6, [](auto& m) -> auto& { return m.gemm_choices; }),
        attribute(
            "step_kernel_chosen", kCondition, 17, [](auto& m) -> auto& { return m.step_kernel_chosen; }),
        attribute(
            "gemm_candidates_checked", kCondition, 10, [](auto& m) -> auto& { return m.gemm_candidates_checked; }),
        attribute(
            "gemm_candidates_rejected", kCondition, 10, [](auto& m) -> auto& { return m.gemm_candidates_rejected; }),
        attribute(
            "math_check", kCondition, 10, [](auto& m) -> auto& { return m.math_check; }),
        attribute(
            "math_check_errors", kCondition, 10, [](auto& m) -> auto& { return m.math_check_errors; }),
        attribute(
            "math_check_tolerance", kCondition, 10, [](auto& m) -> auto& { return m.math_check_tolerance; }),
        attribute(
            "math_check_steps", kCondition, 10, [](auto& m) -> auto& { return m.math_check_steps; }),
        attribute(
            "math_check_seconds", kCondition, 10, [](auto& m) -> auto& { return m.math_check_seconds; }),
        attribute(
            "setup", kCondition, 15, [](auto& m) -> auto& { return m.setup; }),
        attribute(
            "unique_id_check", kCondition, 15, [](auto& m) -> auto& { return m.unique_id_check; }),
        attribute(
            "job_notice", kCondition, 15, [](auto& m) -> auto& { return m.job_notice; }),
        attribute(
            "job_plan", kCondition, 15, [](auto& m) -> auto& { return m.job_plan; }),
        attribute(
            kNcclAlgoAttribute, kCompared, 1, [](auto& m) -> auto& { return m.nccl_algo; }),
        attribute(
            kNcclProtoAttribute, kCompared, 1, [](auto& m) -> auto& { return m.nccl_proto; }),
        attribute(
            "nccl_environment", kSetting, 1, [](auto& m) -> auto& { return m.nccl_environment; }),
        attribute(
            "command_line", kCondition, 1, [](auto& m) -> auto& { return m.command_line; }),
        attribute(
            "started_utc", kCondition, 1, [](auto& m) -> auto& { return m.started_utc; })),
    kLibraryAndRankAttributes,
    std::make_tuple(
        attribute(
            "max_sm_clock_mhz", kCondition, 1, [](auto& m) -> auto& { return m.max_sm_clock_mhz; }),
        attribute(
            "max_memory_clock_mhz", kCondition, 1, [](auto& m) -> auto& { return m.max_memory_clock_mhz; })));

// Every attribute of a configuration as visit(name, stored value): the rows above and the settings table's, each
// setting in its stored form (setting_attribute.hpp). The writer and the reader walk this list, and so do --resume's
// identity, the attribute texts and the roles below.
template <typename Metadata, typename Visitor>  // Metadata: ConfigurationMetadata, const or not
void for_each_attribute_of_configuration(Metadata& m, Visitor&& visit) {
  for_each_row(kAttributesBeforeSettings, [&](const auto& row) { visit(row.name, row.get(m)); });
  // How the GEMMs were chosen means something only where this program chose them (CUDA; the peer's framework chooses
  // its own). A reader has read the device and the implementation by now.
  const bool own_gemms = m.device == "cuda" && m.implementation == kImplementation;
  for_each_recorded_setting(m.configuration, own_gemms, [&](const char* name, auto& setting, bool applies) {
    visit_setting(name, setting, applies, visit);
  });
  for_each_row(kAttributesAfterSettings, [&](const auto& row) { visit(row.name, row.get(m)); });
}

struct AttributeRoleEntry {
  std::string_view name;
  AttributeRole role;
  std::int32_t since_version;  // the schema version that added it (1: an original one)
};
// Every attribute of for_each_attribute_of_configuration, once, with its role and the version that added it: by role,
// scaled first, each role's in the order of the settings table and then of the rows above. The pairing identities
// list their attributes in this order. A reader of an older file that lacks an attribute added later keeps the
// default (version_one_configuration and the struct's defaults).
inline const std::vector<AttributeRoleEntry>& configuration_attribute_roles() {
  static const std::vector<AttributeRoleEntry> roles = [] {
    std::vector<AttributeRoleEntry> all;
    for (const SettingFacts& row : settings_facts()) all.push_back({row.attribute, row.role, row.since_version});
    const auto add = [&](const auto& row) { all.push_back({row.name, row.role, row.since_version}); };
    for_each_row(kAttributesBeforeSettings, add);
    for_each_row(kAttributesAfterSettings, add);
    std::stable_sort(all.begin(), all.end(),
                     [](const AttributeRoleEntry& a, const AttributeRoleEntry& b) { return a.role > b.role; });
    return all;
  }();
  return roles;
}

// Attributes of the other groups (a configuration's progress, a probe) added after version 1, with the version that
// added them; configuration attributes carry theirs in their rows.
inline constexpr AddedName kAddedOtherAttributes[] = {
    {"interrupted", 7}, {"interrupted_utc", 7}, {"step_labels", 8},    {"replica_check", 9}, {"stopped_early", 10},
    {"nodes", 13},      {"gpus_per_node", 13},  {"nics_per_node", 13}, {"network", 13},
};

// The schema version that added attribute `name` (1 for the original ones): a reader of an older file that lacks it
// keeps the default.
inline std::int32_t attribute_added_in(std::string_view name) {
  for (const AttributeRoleEntry& entry : configuration_attribute_roles())
    if (entry.name == name) return entry.since_version;
  return added_in(kAddedOtherAttributes, name);
}

// The role of configuration attribute `name`; std::logic_error for a name no row has.
inline AttributeRole configuration_attribute_role(std::string_view name) {
  for (const AttributeRoleEntry& entry : configuration_attribute_roles())
    if (entry.name == name) return entry.role;
  throw std::logic_error("configuration attribute '" + std::string(name) +
                         "' has no row (config/settings_table.hpp, results_schema.hpp)");
}

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

// What a configuration's replica_check says (comm/replica_check.cpp writes the texts): the ranks' parameters were
// bit-identical after its runs (or there was one rank), nothing checked them (a file before version 9, the PyTorch
// peer), or they differed. Readers compute no speedup or verdict from a configuration whose replicas differed.
enum class ReplicaVerdict { identical, not_checked, differ };
inline ReplicaVerdict replica_verdict(std::string_view replica_check) {
  if (replica_check.empty()) return ReplicaVerdict::not_checked;
  if (replica_check.rfind("identical on ", 0) == 0 || replica_check == "1 rank: nothing to compare")
    return ReplicaVerdict::identical;
  return ReplicaVerdict::differ;
}

// What a configuration's math_check says: passed, not checked (a file before version 10, the PyTorch peer), or
// failed. Readers compute no speedup or verdict from a configuration whose check failed.
enum class MathCheckVerdict { passed, not_checked, failed };
inline MathCheckVerdict math_check_verdict(std::string_view math_check) {
  if (math_check.empty()) return MathCheckVerdict::not_checked;
  return math_check.rfind("passed", 0) == 0 ? MathCheckVerdict::passed : MathCheckVerdict::failed;
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
struct MeasurementConditions {
  std::string implementation = kImplementation;
  std::string device;  // "cuda" or "cpu"
  std::int32_t ranks = 0;
  std::string nccl_algo = kNcclDefault;
  std::string nccl_proto = kNcclDefault;
  std::vector<std::string> nccl_environment;
  std::string command_line;
  std::string started_utc;   // the writer fills it in when empty
  std::string finished_utc;  // the writer fills it in when empty
  std::string cuda_runtime_version = kNotApplicable;
  std::string cuda_driver_version = kNotApplicable;
  std::string cublas_version = kNotApplicable;
  std::string nccl_version = kNotApplicable;
  std::string mpi_library_version = kNotApplicable;
  // One entry per rank, in rank order.
  std::vector<std::string> hosts;
  std::vector<std::string> gpu_names;
  std::vector<std::string> gpu_uuids;
  std::vector<std::string> gpu_pci_bus_ids;
  std::vector<std::string> peer_topology;
};

template <typename Conditions, typename Visitor>
void for_each_attribute_of_conditions(Conditions& c, Visitor&& visit) {
  visit("implementation", c.implementation);
  visit("device", c.device);
  visit("ranks", c.ranks);
  visit("nccl_algo", c.nccl_algo);
  visit("nccl_proto", c.nccl_proto);
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
