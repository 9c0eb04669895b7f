// Purpose: a configuration's attributes in the results file (docs/results-format.md): ConfigurationMetadata, the rows
// of its attributes that are no settings (name, role in pairing, the schema version that added it, member) beside the
// settings table's, and the one walk over all of them that the writer, the reader, --resume's identity and the
// attribute texts share.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "config/configuration.hpp"
#include "config/settings_table.hpp"
#include "results/setting_attribute.hpp"

namespace mgpu::results_schema {

using mgpu::AttributeRole;  // a configuration attribute's role in pairing (config/settings_table.hpp)

// Which code measured a configuration or a standalone measurement ("implementation" attribute): this program, or the
// PyTorch peer (bench/peers/), which writes "pytorch-ddp", "pytorch-graph" or "pytorch-graph-dp".
inline constexpr char kImplementation[] = "mgpu_bench";

// ---- Attributes: each struct below is written and read through its for_each_* list or attribute rows, the only
// place its names live.

// The settings a file of schema version 1 implies for every attribute it lacks: the defaults of a resolved
// configuration, but the step not captured as a graph (graphs came in version 2).
inline Configuration version_one_configuration() {
  Configuration configuration;
  configuration.training.graph = false;
  return configuration;
}

// The library versions and the per-rank identity, recorded both with a configuration and with a standalone group
// (kLibraryAndRankAttributes names them).
struct RanksAndLibraries {
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
  std::vector<std::string> peer_topology;  // this rank's GPU to every other rank's: NVLink/PCIe path, P2P access
};

// What a configuration is and where it ran; written once when its group is created.
struct ConfigurationMetadata : RanksAndLibraries {
  std::string name;                              // the group name under /configurations (not an attribute)
  std::string implementation = kImplementation;  // which code measured it (v2)
  // Every setting of the configuration, typed: the model, batch, GPU count, trial and every step setting, steps, runs,
  // Adam and NCCL's choices (the rows of config/settings_table.hpp), each one attribute of its name in the file's
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
  std::vector<std::string> nccl_environment;  // "NAME=value" for every NCCL_* variable in effect
  std::string command_line;
  std::string started_utc;                   // ISO 8601; the writer fills it in when empty
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

template <typename Record, typename Visitor>  // Record: a RanksAndLibraries, const or not
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
        // The preset pairs N-GPU configurations with each other, never with their baseline, as NCCL's choices do.
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
// identity and the attribute texts. The reader restores each attribute as it is visited, so the order is the one
// restoring needs: the implementation and device first (whether this program chose the GEMMs), then the settings
// (for_each_recorded_setting: those that always apply, overlap among them, before those that exist only with it),
// then the rest.
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

}  // namespace mgpu::results_schema
