// Purpose: tests of the HDF5 results file: what ResultsWriter puts on disk, checked through the raw HDF5 C API with the
// names of docs/results-format.md spelled out (so a renamed dataset fails here), the round trip through
// read_results_file, the file's validity after every run, and the one-line errors for bad paths and bad files.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "platform/hdf5_check.hpp"
#include "results/attribute_roles.hpp"
#include "results/hdf5_handles.hpp"
#include "results/results_reader.hpp"
#include "results/results_writer.hpp"

namespace fs = std::filesystem;
using namespace mgpu;

namespace {

constexpr int kRanks = 2;
constexpr int kWarmup = 1;
constexpr int kMeasured = 3;
constexpr int kSteps = kWarmup + kMeasured;
constexpr int kRuns = 3;
constexpr double kMaxSmClockMhz = 1980;
const char* const kPhaseDatasetNames[kPhaseCount] = {"forward_ms",      "backward_ms",  "allreduce_ms",
                                                     "exposed_comm_ms", "optimizer_ms", "step_ms"};

// ---- Synthetic measurements: every value says where it belongs, so a transposed or misplaced value fails.

double synthetic_ms(int config, int run, int rank, int phase, int step) {
  return 1000.0 * config + 100.0 * run + 10.0 * rank + phase + 0.125 * step;
}
double synthetic_loss(int run, int rank, int step) { return 2.0 + run + 0.5 * rank - 0.25 * step; }
double synthetic_memory_bytes(int config, int run, int rank) { return 1e9 * (config + 1) + 1e6 * rank + run; }
// Rank 1 of run 1 runs at half clock: the one throttled (run, rank) of configuration 0, as rank 0 judged it
// (stats/run_checks.hpp) and the record says. Configuration 1 does not know rank 1's maximum, so the same low clock is
// not flagged there.
double synthetic_sm_clock(int run, int rank) { return (run == 1 && rank == 1) ? 990.0 : 1900.0 + rank; }
double synthetic_memory_clock(int run, int rank) { return 2619.0 - run - rank; }
int synthetic_clock_samples(int run, int rank) { return 10 + run + rank; }
// Wall time per measured step; the record holds the whole measured span (kMeasured times it, exact in binary).
double synthetic_wall_per_step_ms(int config, int run, int rank) { return 0.5 + config + 0.25 * run + 0.125 * rank; }
int expected_throttled(int config, int run, int rank) { return (config == 0 && run == 1 && rank == 1) ? 1 : 0; }

RunRecord synthetic_record(int config, int run, int rank) {
  RunRecord record(kSteps);
  for (int p = 0; p < kPhaseCount; ++p)
    for (int s = 0; s < kSteps; ++s) record.ms(Phase(p), s) = synthetic_ms(config, run, rank, p, s);
  for (int s = 0; s < kSteps; ++s) record.loss[s] = synthetic_loss(run, rank, s);
  record.memory_peak_bytes = synthetic_memory_bytes(config, run, rank);
  record.sm_clock_mhz = synthetic_sm_clock(run, rank);
  record.memory_clock_mhz = synthetic_memory_clock(run, rank);
  record.clock_samples = synthetic_clock_samples(run, rank);
  record.throttled = expected_throttled(config, run, rank) != 0;
  record.measured_wall_ms = kMeasured * synthetic_wall_per_step_ms(config, run, rank);
  return record;
}

std::vector<RunRecord> synthetic_run(int config, int run) {
  std::vector<RunRecord> per_rank;
  for (int rank = 0; rank < kRanks; ++rank) per_rank.push_back(synthetic_record(config, run, rank));
  return per_rank;
}

// Names chosen so creation order (small first) differs from name order (large first).
const char* const kConfigurationNames[] = {"small_b8_n2_cpu", "large_b32_n2_cuda"};

ConfigurationMetadata synthetic_metadata(int config) {
  ConfigurationMetadata m;
  m.name = kConfigurationNames[config];
  m.configuration.training.model.name = config == 0 ? "medium" : "large";
  m.configuration.training.model.widths = config == 0 ? std::vector<std::int32_t>{847, 256, 128, 64, 3}
                                                      : std::vector<std::int32_t>{4800, 1024, 1024, 512, 512, 256, 3};
  m.configuration.training.model.dropout = config == 0 ? 0.2 : 0.3;
  m.parameter_count = config == 0 ? 258432 : 6885376;
  m.dense_weight_count = m.parameter_count - 1000;
  m.configuration.training.global_batch = config == 0 ? 8 : 32;
  m.local_batch = m.global_batch() / kRanks;
  m.configuration.gpus = kRanks;
  m.device = config == 0 ? "cpu" : "cuda";
  m.configuration.training.warmup_steps = kWarmup;
  m.configuration.training.measured_steps = kMeasured;
  m.configuration.runs_requested = kRuns;
  m.configuration.training.seed = 0xFEDCBA9876543210ULL;  // above INT64_MAX: must survive as unsigned
  m.configuration.training.adam.learning_rate = 1e-3;
  m.configuration.training.adam.beta1 = 0.9;
  m.configuration.training.adam.beta2 = 0.999;
  m.configuration.training.adam.epsilon = 1e-7;
  if (config == 1) {
    m.configuration.nccl_algo = "Ring";
    m.nccl_environment = {"NCCL_ALGO=Ring", "NCCL_DEBUG=WARN"};
    m.cuda_runtime_version = "12.4";
    m.nccl_version = "2.21.5";
  }
  m.command_line =
      "mgpu_bench --model " + m.configuration.training.model.name + " --batch " + std::to_string(m.global_batch());
  m.started_utc = "2025-01-31T12:00:0" + std::to_string(config) + "Z";
  m.mpi_library_version = "Open MPI v4.1.4";
  for (int rank = 0; rank < kRanks; ++rank) {
    m.hosts.push_back("node" + std::to_string(rank));
    m.gpu_names.push_back(config == 0 ? "n/a" : "NVIDIA H100 80GB HBM3");
    m.gpu_uuids.push_back("GPU-" + std::to_string(config) + "-" + std::to_string(rank));
    m.gpu_pci_bus_ids.push_back("00000000:0" + std::to_string(rank) + ":00.0");
    m.peer_topology.push_back(rank == 0 ? "GPU1: NV18, P2P yes" : "GPU0: NV18, P2P yes");
    m.max_sm_clock_mhz.push_back(config == 1 && rank == 1 ? 0.0 : kMaxSmClockMhz);
    m.max_memory_clock_mhz.push_back(2619);
  }
  return m;
}

// ---- Raw HDF5 access, independent of src/results: names spelled out, types checked in numpy's notation.

struct RawArray {
  std::vector<hsize_t> dims;
  std::vector<double> values;  // every stored number here is exact in a double
};

RawArray raw_dataset(hid_t file, const std::string& path) {
  const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(file, path.c_str(), H5P_DEFAULT)));
  const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
  RawArray array;
  array.dims.resize(static_cast<std::size_t>(MGPU_H5_CHECK(H5Sget_simple_extent_ndims(space.get()))));
  MGPU_H5_CHECK(H5Sget_simple_extent_dims(space.get(), array.dims.data(), nullptr));
  array.values.resize(static_cast<std::size_t>(MGPU_H5_CHECK(H5Sget_simple_extent_npoints(space.get()))));
  if (!array.values.empty())
    MGPU_H5_CHECK(H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, array.values.data()));
  return array;
}

// "f8", "i8", "i4", "u8", "u1" or "str" (variable-length UTF-8), as numpy/h5py would see the stored type.
std::string type_code(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "f" + std::to_string(H5Tget_size(type));
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "i") + std::to_string(H5Tget_size(type));
    case H5T_STRING:
      return H5Tis_variable_str(type) > 0 && H5Tget_cset(type) == H5T_CSET_UTF8 ? "str" : "fixed-or-ascii-string";
    default:
      return "other";
  }
}

std::string dataset_type(hid_t file, const std::string& path) {
  const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(file, path.c_str(), H5P_DEFAULT)));
  const H5Datatype type(MGPU_H5_CHECK(H5Dget_type(dataset.get())));
  return type_code(type.get());
}

H5Attribute open_raw_attribute(hid_t file, const std::string& object, const std::string& name) {
  return H5Attribute(MGPU_H5_CHECK(H5Aopen_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT)));
}

std::string attribute_type(hid_t file, const std::string& object, const std::string& name) {
  const H5Attribute attribute = open_raw_attribute(file, object, name);
  const H5Datatype type(MGPU_H5_CHECK(H5Aget_type(attribute.get())));
  return type_code(type.get());
}

std::vector<double> raw_numbers(hid_t file, const std::string& object, const std::string& name) {
  const H5Attribute attribute = open_raw_attribute(file, object, name);
  const H5Dataspace space(MGPU_H5_CHECK(H5Aget_space(attribute.get())));
  std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())));
  if (!values.empty()) MGPU_H5_CHECK(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, values.data()));
  return values;
}
double raw_number(hid_t file, const std::string& object, const std::string& name) {
  const std::vector<double> values = raw_numbers(file, object, name);
  EXPECT_EQ(values.size(), 1u) << name;
  return values.empty() ? -1 : values.front();
}

std::vector<std::string> raw_strings(hid_t file, const std::string& object, const std::string& name) {
  const H5Attribute attribute = open_raw_attribute(file, object, name);
  const H5Dataspace space(MGPU_H5_CHECK(H5Aget_space(attribute.get())));
  std::vector<char*> texts(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space.get())), nullptr);
  if (texts.empty()) return {};
  const H5Datatype type(MGPU_H5_CHECK(H5Tcopy(H5T_C_S1)));
  MGPU_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE));
  MGPU_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  MGPU_H5_CHECK(H5Aread(attribute.get(), type.get(), texts.data()));
  std::vector<std::string> values(texts.begin(), texts.end());
  for (char* text : texts) H5free_memory(text);
  return values;
}
std::string raw_string(hid_t file, const std::string& object, const std::string& name) {
  const std::vector<std::string> values = raw_strings(file, object, name);
  EXPECT_EQ(values.size(), 1u) << name;
  return values.empty() ? "" : values.front();
}

H5File open_read_only(const std::string& path) {
  return H5File(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));
}

std::string group_of(int config) { return std::string("/configurations/") + kConfigurationNames[config]; }

// Writes `file` with one configuration of `metadata` and one run.
void write_one_configuration(const std::string& file, const ConfigurationMetadata& metadata,
                             const std::vector<RunRecord>& run) {
  ResultsWriter writer(file, false);
  ResultsWriter::Configuration configuration = writer.add_configuration(metadata);
  writer.append_run(configuration, run);
  writer.finish(configuration);
  writer.close();
}

// Makes `file` look like one of schema_version `version`: the root says so, and the groups of configurations
// 0 .. configurations - 1 lack `attributes` (those a later version added).
void make_older(const std::string& file, std::int32_t version, const std::vector<std::string>& attributes = {},
                int configurations = 1) {
  const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
  const H5Attribute root_version(MGPU_H5_CHECK(H5Aopen(raw.get(), "schema_version", H5P_DEFAULT)));
  MGPU_H5_CHECK(H5Awrite(root_version.get(), H5T_NATIVE_INT32, &version));
  for (int config = 0; config < configurations; ++config) {
    for (const std::string& attribute : attributes)
      MGPU_H5_CHECK(H5Adelete_by_name(raw.get(), group_of(config).c_str(), attribute.c_str(), H5P_DEFAULT));
  }
}

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "mgpu_results_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  std::string path(const std::string& name) const { return (directory_ / name).string(); }

  // Two configurations of kRuns runs each, both finished; checks runs_completed after every append.
  std::string write_sample(const std::string& name = "sample.h5") {
    const std::string file = path(name);
    ResultsWriter writer(file, false);
    for (int config = 0; config < 2; ++config) {
      ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(config));
      for (int run = 0; run < kRuns; ++run) {
        writer.append_run(configuration, synthetic_run(config, run));
        EXPECT_EQ(configuration.runs_completed(), run + 1);
        const H5File reader = open_read_only(file);  // a second handle while the writer holds the file
        EXPECT_EQ(raw_number(reader.get(), group_of(config), "runs_completed"), run + 1);
      }
      writer.finish(configuration);
    }
    writer.close();
    return file;
  }

  fs::path directory_;
};

// ---- What is on disk

TEST_F(ResultsFileTest, RootAttributes) {
  const H5File file = open_read_only(write_sample());
  EXPECT_EQ(attribute_type(file.get(), "/", "schema_version"), "i4");
  EXPECT_EQ(raw_number(file.get(), "/", "schema_version"), results_schema::kVersion);
  EXPECT_EQ(raw_string(file.get(), "/", "producer"), "mgpu_bench");
  EXPECT_EQ(raw_string(file.get(), "/", "project_version"), project_version());
  EXPECT_EQ(raw_string(file.get(), "/", "git_revision"), git_revision());
  EXPECT_TRUE(
      std::regex_match(raw_string(file.get(), "/", "created_utc"), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST_F(ResultsFileTest, ConfigurationAttributes) {
  const H5File file = open_read_only(write_sample());
  for (int config = 0; config < 2; ++config) {
    SCOPED_TRACE(kConfigurationNames[config]);
    const ConfigurationMetadata m = synthetic_metadata(config);
    const std::string group = group_of(config);
    const hid_t f = file.get();
    EXPECT_EQ(raw_string(f, group, "implementation"), "mgpu_bench");
    EXPECT_EQ(raw_string(f, group, "model"), m.configuration.training.model.name);
    EXPECT_EQ(attribute_type(f, group, "layer_widths"), "i4");
    EXPECT_EQ(raw_numbers(f, group, "layer_widths"), std::vector<double>(m.configuration.training.model.widths.begin(),
                                                                         m.configuration.training.model.widths.end()));
    EXPECT_EQ(raw_number(f, group, "dropout"), m.configuration.training.model.dropout);
    EXPECT_EQ(attribute_type(f, group, "parameter_count"), "i8");
    EXPECT_EQ(raw_number(f, group, "parameter_count"), m.parameter_count);
    EXPECT_EQ(raw_number(f, group, "dense_weight_count"), m.dense_weight_count);
    EXPECT_EQ(raw_number(f, group, "global_batch"), m.global_batch());
    EXPECT_EQ(raw_number(f, group, "local_batch"), m.local_batch);
    EXPECT_EQ(raw_string(f, group, "batch_mode"), "global");
    EXPECT_EQ(raw_number(f, group, "ranks"), kRanks);
    EXPECT_EQ(raw_string(f, group, "device"), m.device);
    EXPECT_EQ(raw_string(f, group, "precision"), "fp32");
    EXPECT_EQ(attribute_type(f, group, "fused_optimizer"), "str");
    EXPECT_EQ(raw_string(f, group, "fused_optimizer"), "off");
    EXPECT_EQ(raw_number(f, group, "warmup_steps"), kWarmup);
    EXPECT_EQ(raw_number(f, group, "measured_steps"), kMeasured);
    EXPECT_EQ(raw_number(f, group, "runs_requested"), kRuns);
    EXPECT_EQ(attribute_type(f, group, "seed"), "u8");
    {  // a double cannot hold this seed exactly: read it as what it is
      const H5Attribute seed = open_raw_attribute(f, group, "seed");
      std::uint64_t value = 0;
      MGPU_H5_CHECK(H5Aread(seed.get(), H5T_NATIVE_UINT64, &value));
      EXPECT_EQ(value, m.configuration.training.seed);
    }
    EXPECT_EQ(raw_number(f, group, "adam_learning_rate"), double{1e-3f});  // the float setting, widened
    EXPECT_EQ(raw_number(f, group, "adam_beta1"), double{0.9f});
    EXPECT_EQ(raw_number(f, group, "adam_beta2"), double{0.999f});
    EXPECT_EQ(raw_number(f, group, "adam_epsilon"), double{1e-7f});
    EXPECT_EQ(raw_string(f, group, "nccl_algo"), config == 0 ? "default" : "Ring");
    EXPECT_EQ(raw_string(f, group, "nccl_proto"), "default");
    EXPECT_EQ(attribute_type(f, group, "nccl_environment"), "str");
    EXPECT_EQ(raw_strings(f, group, "nccl_environment"), m.nccl_environment);  // empty for configuration 0
    EXPECT_EQ(raw_string(f, group, "command_line"), m.command_line);
    EXPECT_EQ(raw_string(f, group, "started_utc"), m.started_utc);
    EXPECT_EQ(raw_string(f, group, "cuda_runtime_version"), config == 0 ? "n/a" : "12.4");
    EXPECT_EQ(raw_string(f, group, "cuda_driver_version"), "n/a");
    EXPECT_EQ(raw_string(f, group, "cublas_version"), "n/a");
    EXPECT_EQ(raw_string(f, group, "nccl_version"), config == 0 ? "n/a" : "2.21.5");
    EXPECT_EQ(raw_string(f, group, "mpi_library_version"), m.mpi_library_version);
    EXPECT_EQ(attribute_type(f, group, "hosts"), "str");
    EXPECT_EQ(raw_strings(f, group, "hosts"), m.hosts);
    EXPECT_EQ(raw_strings(f, group, "gpu_names"), m.gpu_names);
    EXPECT_EQ(raw_strings(f, group, "gpu_uuids"), m.gpu_uuids);
    EXPECT_EQ(raw_strings(f, group, "gpu_pci_bus_ids"), m.gpu_pci_bus_ids);
    EXPECT_EQ(raw_strings(f, group, "peer_topology"), m.peer_topology);
    EXPECT_EQ(raw_numbers(f, group, "max_sm_clock_mhz"), m.max_sm_clock_mhz);
    EXPECT_EQ(raw_numbers(f, group, "max_memory_clock_mhz"), m.max_memory_clock_mhz);
    EXPECT_EQ(attribute_type(f, group, "runs_completed"), "i4");
    EXPECT_EQ(raw_number(f, group, "runs_completed"), kRuns);
    EXPECT_EQ(attribute_type(f, group, "complete"), "i4");
    EXPECT_EQ(raw_number(f, group, "complete"), 1);
    EXPECT_TRUE(std::regex_match(raw_string(f, group, "finished_utc"), std::regex(R"(\d{4}-.*Z)")));
  }
}

TEST_F(ResultsFileTest, DatasetsHoldEveryValueInPlace) {
  const H5File file = open_read_only(write_sample());
  const hid_t f = file.get();
  const std::vector<hsize_t> runs_ranks_steps{kRuns, kRanks, kSteps}, runs_ranks{kRuns, kRanks};
  for (int config = 0; config < 2; ++config) {
    SCOPED_TRACE(kConfigurationNames[config]);
    const std::string group = group_of(config) + "/";
    for (int p = 0; p < kPhaseCount; ++p) {
      const std::string name = group + kPhaseDatasetNames[p];
      const RawArray array = raw_dataset(f, name);
      ASSERT_EQ(array.dims, runs_ranks_steps) << name;
      EXPECT_EQ(dataset_type(f, name), "f8");
      for (int run = 0; run < kRuns; ++run)
        for (int rank = 0; rank < kRanks; ++rank)
          for (int s = 0; s < kSteps; ++s)
            EXPECT_EQ(array.values[(run * kRanks + rank) * kSteps + s], synthetic_ms(config, run, rank, p, s)) << name;
    }
    const RawArray loss = raw_dataset(f, group + "loss");
    ASSERT_EQ(loss.dims, (std::vector<hsize_t>{kRuns, kSteps}));
    EXPECT_EQ(dataset_type(f, group + "loss"), "f8");
    for (int run = 0; run < kRuns; ++run)
      for (int s = 0; s < kSteps; ++s)
        EXPECT_EQ(loss.values[run * kSteps + s], (synthetic_loss(run, 0, s) + synthetic_loss(run, 1, s)) / 2);

    struct PerRank {
      const char* name;
      const char* type;
      double (*expected)(int config, int run, int rank);
    };
    const PerRank per_rank[] = {
        {"memory_peak_bytes", "i8", [](int c, int run, int rank) { return synthetic_memory_bytes(c, run, rank); }},
        {"sm_clock_mhz", "f8", [](int, int run, int rank) { return synthetic_sm_clock(run, rank); }},
        {"memory_clock_mhz", "f8", [](int, int run, int rank) { return synthetic_memory_clock(run, rank); }},
        {"clock_samples", "i4", [](int, int run, int rank) { return double(synthetic_clock_samples(run, rank)); }},
        {"throttled", "u1", [](int c, int run, int rank) { return double(expected_throttled(c, run, rank)); }},
        {"wall_per_step_ms", "f8", [](int c, int run, int rank) { return synthetic_wall_per_step_ms(c, run, rank); }}};
    for (const PerRank& dataset : per_rank) {
      const RawArray array = raw_dataset(f, group + dataset.name);
      ASSERT_EQ(array.dims, runs_ranks) << dataset.name;
      EXPECT_EQ(dataset_type(f, group + dataset.name), dataset.type) << dataset.name;
      for (int run = 0; run < kRuns; ++run)
        for (int rank = 0; rank < kRanks; ++rank)
          EXPECT_EQ(array.values[run * kRanks + rank], dataset.expected(config, run, rank)) << dataset.name;
    }
    const RawArray is_warmup = raw_dataset(f, group + "is_warmup");
    EXPECT_EQ(is_warmup.dims, std::vector<hsize_t>{kSteps});
    EXPECT_EQ(dataset_type(f, group + "is_warmup"), "u1");
    EXPECT_EQ(is_warmup.values, (std::vector<double>{1, 0, 0, 0}));
  }
}

TEST_F(ResultsFileTest, DatasetsAreChunkedExtensibleAndAnnotated) {
  const H5File file = open_read_only(write_sample());
  const std::string group = group_of(0) + "/";
  std::vector<std::pair<std::string, std::string>> units;  // dataset, expected units
  for (const char* phase : kPhaseDatasetNames) units.emplace_back(phase, "ms");
  units.insert(units.end(), {{"loss", "1"},
                             {"memory_peak_bytes", "bytes"},
                             {"sm_clock_mhz", "MHz"},
                             {"memory_clock_mhz", "MHz"},
                             {"clock_samples", "1"},
                             {"throttled", "1"},
                             {"wall_per_step_ms", "ms"}});
  for (const auto& [name, unit] : units) {
    const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(file.get(), (group + name).c_str(), H5P_DEFAULT)));
    const H5PropertyList create(MGPU_H5_CHECK(H5Dget_create_plist(dataset.get())));
    EXPECT_EQ(H5Pget_layout(create.get()), H5D_CHUNKED) << name;
    const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
    hsize_t dims[3] = {}, max_dims[3] = {};
    MGPU_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims, max_dims));
    EXPECT_EQ(max_dims[0], H5S_UNLIMITED) << name;
    EXPECT_EQ(raw_string(file.get(), group + name, "units"), unit) << name;
    EXPECT_FALSE(raw_string(file.get(), group + name, "description").empty()) << name;
  }
  EXPECT_EQ(raw_string(file.get(), group + "is_warmup", "units"), "1");
  EXPECT_FALSE(raw_string(file.get(), group + "is_warmup", "description").empty());
}

// The process may die between runs: what is on disk after a run must already be a valid file holding it.
TEST_F(ResultsFileTest, FileOnDiskIsValidAfterEveryRun) {
  const std::string file = path("live.h5");
  ResultsWriter writer(file, false);
  ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(0));
  for (int run = 0; run < 2; ++run) {
    writer.append_run(configuration, synthetic_run(0, run));
    // A byte copy of the file as it is now, opened as a separate file: only what was flushed is in it.
    const std::string copy = path("copy" + std::to_string(run) + ".h5");
    fs::copy_file(file, copy);
    const H5File snapshot = open_read_only(copy);
    EXPECT_EQ(raw_number(snapshot.get(), group_of(0), "runs_completed"), run + 1);
    EXPECT_EQ(raw_number(snapshot.get(), group_of(0), "complete"), 0);
    EXPECT_EQ(raw_string(snapshot.get(), group_of(0), "finished_utc"), "");
    EXPECT_EQ(raw_dataset(snapshot.get(), group_of(0) + "/step_ms").dims,
              (std::vector<hsize_t>{hsize_t(run + 1), kRanks, kSteps}));
    const ResultsFile read = read_results_file(copy);
    EXPECT_EQ(read.configuration(kConfigurationNames[0]).runs(), run + 1);
  }
}

// The free space a run needs before it is appended is what docs/reliability.md states (4 × the run's packed bytes +
// 64 KiB; a run packs 7 values per step and 7 per run for each rank), and it covers what an append really adds.
TEST_F(ResultsFileTest, FreeSpaceToAppendARunIsFourTimesItsBytesPlus64KiB) {
  EXPECT_EQ(ResultsWriter::free_space_to_append_run(1, 1), 4 * (7 + 7) * 8 + 65536);
  EXPECT_EQ(ResultsWriter::free_space_to_append_run(kRanks, kSteps), 4 * kRanks * (7 * kSteps + 7) * 8 + 65536);
  EXPECT_EQ(ResultsWriter::free_space_to_append_run(4, 110), 164992u);

  const std::string file = path("growth.h5");
  ResultsWriter writer(file, false);
  ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(0));
  writer.append_run(configuration, synthetic_run(0, 0));
  const std::uintmax_t before = fs::file_size(file);
  writer.append_run(configuration, synthetic_run(0, 1));
  EXPECT_LE(fs::file_size(file) - before, ResultsWriter::free_space_to_append_run(kRanks, kSteps));
}

// ---- Round trip through read_results_file

// Every attribute of a configuration as text, through the schema's own list (the raw tests above check the names).
std::vector<std::string> attribute_texts(const ConfigurationMetadata& m) {
  std::vector<std::string> texts;
  const auto text = [](const auto& value) {
    std::ostringstream out;
    out.precision(17);
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
      out << value;
    } else if constexpr (std::is_arithmetic_v<std::decay_t<decltype(value)>>) {
      out << value;
    } else {
      for (const auto& element : value) out << element << ";";
    }
    return out.str();
  };
  results_schema::for_each_attribute_of_configuration(
      m, [&](const char* name, const auto& value) { texts.push_back(std::string(name) + "=" + text(value)); });
  return texts;
}

TEST_F(ResultsFileTest, ReaderRoundTrip) {
  const ResultsFile file = read_results_file(write_sample());
  EXPECT_EQ(file.root.schema_version, results_schema::kVersion);
  EXPECT_EQ(file.root.producer, "mgpu_bench");
  EXPECT_EQ(file.root.git_revision, git_revision());
  ASSERT_EQ(file.configurations.size(), 2u);
  for (int config = 0; config < 2; ++config) {
    const ConfigurationResults& c = file.configurations[config];  // creation order, not name order
    SCOPED_TRACE(kConfigurationNames[config]);
    EXPECT_EQ(c.metadata.name, kConfigurationNames[config]);
    EXPECT_EQ(attribute_texts(c.metadata), attribute_texts(synthetic_metadata(config)));
    EXPECT_EQ(c.progress.runs_completed, kRuns);
    EXPECT_EQ(c.progress.complete, 1);
    EXPECT_EQ(c.is_warmup, (std::vector<std::uint8_t>{1, 0, 0, 0}));
    for (int run = 0; run < kRuns; ++run) {
      for (int s = 0; s < kSteps; ++s) {
        for (int rank = 0; rank < kRanks; ++rank)
          for (int p = 0; p < kPhaseCount; ++p)
            EXPECT_EQ(c.measurements.phase_ms[p].at(run, rank, s), synthetic_ms(config, run, rank, p, s));
        EXPECT_EQ(c.distributed_step_ms(run, s), synthetic_ms(config, run, kRanks - 1, int(Phase::step), s));
        EXPECT_EQ(c.measurements.loss.at(run, s), (synthetic_loss(run, 0, s) + synthetic_loss(run, 1, s)) / 2);
      }
      for (int rank = 0; rank < kRanks; ++rank) {
        EXPECT_EQ(c.measurements.memory_peak_bytes.at(run, rank),
                  static_cast<std::int64_t>(synthetic_memory_bytes(config, run, rank)));
        EXPECT_EQ(c.measurements.sm_clock_mhz.at(run, rank), synthetic_sm_clock(run, rank));
        EXPECT_EQ(c.measurements.memory_clock_mhz.at(run, rank), synthetic_memory_clock(run, rank));
        EXPECT_EQ(c.measurements.clock_samples.at(run, rank), synthetic_clock_samples(run, rank));
        EXPECT_EQ(c.measurements.throttled.at(run, rank), expected_throttled(config, run, rank));
        EXPECT_EQ(c.measurements.wall_per_step_ms.at(run, rank), synthetic_wall_per_step_ms(config, run, rank));
      }
    }
  }
  EXPECT_EQ(&file.configuration("large_b32_n2_cuda"), &file.configurations[1]);
  EXPECT_THROW(file.configuration("absent"), UsageError);
}

TEST_F(ResultsFileTest, ReaderIgnoresRowsOfAnInterruptedAppend) {
  const std::string file = path("interrupted.h5");
  {
    ResultsWriter writer(file, false);
    ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(0));
    writer.append_run(configuration, synthetic_run(0, 0));
  }
  {  // as if the process died after extending step_ms for a second run but before runs_completed moved
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Dataset step(MGPU_H5_CHECK(H5Dopen2(raw.get(), (group_of(0) + "/step_ms").c_str(), H5P_DEFAULT)));
    const hsize_t dims[3] = {2, kRanks, kSteps};
    MGPU_H5_CHECK(H5Dset_extent(step.get(), dims));
  }
  const ResultsFile read = read_results_file(file);
  const ConfigurationResults& c = read.configurations.at(0);
  EXPECT_EQ(c.runs(), 1);
  EXPECT_EQ(c.progress.complete, 0);
  EXPECT_EQ(c.measurements.phase_ms[int(Phase::step)].shape, (std::vector<std::size_t>{1, kRanks, kSteps}));
}

// ---- Writer misuse

TEST_F(ResultsFileTest, WriterRejectsInconsistentInput) {
  ResultsWriter writer(path("misuse.h5"), false);
  ConfigurationMetadata bad = synthetic_metadata(0);
  bad.hosts.pop_back();
  EXPECT_THROW(writer.add_configuration(bad), Error);
  ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(0));
  EXPECT_THROW(writer.add_configuration(synthetic_metadata(0)), Error);  // same name twice
  std::vector<RunRecord> one_rank = synthetic_run(0, 0);
  one_rank.pop_back();
  EXPECT_THROW(writer.append_run(configuration, one_rank), Error);
  std::vector<RunRecord> short_run = synthetic_run(0, 0);
  short_run[1] = RunRecord(kSteps - 1);
  EXPECT_THROW(writer.append_run(configuration, short_run), Error);
  EXPECT_EQ(configuration.runs_completed(), 0);
  writer.finish(configuration);
  EXPECT_THROW(writer.append_run(configuration, synthetic_run(0, 0)), Error);
}

// The writer's bounds on the step counts: no warm-up (every step measured) or no measured step is a configuration, a
// negative count or no step at all is not.
TEST_F(ResultsFileTest, WriterTakesZeroWarmupOrZeroMeasuredStepsButNotNoStepsAtAll) {
  ResultsWriter writer(path("steps.h5"), false);
  const auto with_steps = [](int index, int warmup, int measured) {
    ConfigurationMetadata m = synthetic_metadata(0);
    m.name = "steps_" + std::to_string(index);
    m.configuration.training.warmup_steps = warmup;
    m.configuration.training.measured_steps = measured;
    return m;
  };
  ResultsWriter::Configuration no_warmup = writer.add_configuration(with_steps(0, 0, kSteps));
  writer.append_run(no_warmup, synthetic_run(0, 0));
  EXPECT_EQ(no_warmup.runs_completed(), 1);
  EXPECT_NO_THROW(writer.add_configuration(with_steps(1, kSteps, 0)));
  EXPECT_THROW(writer.add_configuration(with_steps(2, -1, kSteps + 1)), Error);
  EXPECT_THROW(writer.add_configuration(with_steps(2, kSteps + 1, -1)), Error);
  EXPECT_THROW(writer.add_configuration(with_steps(2, 0, 0)), Error);
}

// ---- Paths: refused before anything is created

TEST_F(ResultsFileTest, CheckCanCreateRefusesAnExistingFileWithoutOverwrite) {
  const std::string file = path("exists.h5");
  std::ofstream(file) << "keep me";
  try {
    ResultsWriter::check_can_create(file, false);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_EQ(std::string(error.what()), "output file '" + file + "' exists; use --force to overwrite");
  }
  EXPECT_THROW(ResultsWriter(file, false), UsageError);
  EXPECT_EQ(fs::file_size(file), 7u);  // untouched
  EXPECT_NO_THROW(ResultsWriter::check_can_create(file, true));
  { ResultsWriter overwritten(file, true); }
  EXPECT_EQ(read_results_file(file).configurations.size(), 0u);
}

TEST_F(ResultsFileTest, CheckCanCreateRefusesAMissingDirectoryAndCreatesNothing) {
  const std::string missing = path("missing");
  const std::string file = missing + "/out.h5";
  try {
    ResultsWriter::check_can_create(file, false);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'" + file + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_THROW(ResultsWriter(file, true), UsageError);
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_TRUE(fs::is_empty(directory_));

  const std::string not_a_directory = path("plain");
  std::ofstream(not_a_directory) << "x";
  EXPECT_THROW(ResultsWriter::check_can_create(not_a_directory + "/out.h5", false), UsageError);
  EXPECT_THROW(ResultsWriter::check_can_create(path(""), false), UsageError);  // a directory, not a file name
}

TEST_F(ResultsFileTest, CheckCanCreateRefusesAnUnwritableDirectory) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  const std::string locked = path("locked");
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(ResultsWriter::check_can_create(locked + "/out.h5", false), UsageError);
  fs::permissions(locked, fs::perms::owner_all);
}

// ---- Files the reader refuses, with one line naming the file

std::string reader_error(const std::string& file) {
  try {
    read_results_file(file);
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("'" + file + "'"), std::string::npos) << message;
    return message;
  }
  ADD_FAILURE() << "no UsageError for " << file;
  return "";
}

TEST_F(ResultsFileTest, ReaderRefusesAFileThatIsNotHdf5) {
  const std::string file = path("text.h5");
  std::ofstream(file) << "forward_ms,backward_ms\n1,2\n";
  EXPECT_EQ(reader_error(file), "'" + file + "' is not an HDF5 file");
  EXPECT_EQ(reader_error(path("absent.h5")), "'" + path("absent.h5") + "' does not exist");
}

TEST_F(ResultsFileTest, ReaderRefusesAnEmptyFile) {
  const std::string file = path("empty.h5");
  std::ofstream(file).close();
  EXPECT_EQ(reader_error(file), "'" + file + "' is empty (0 bytes), not a results file");
}

// Rewrites configuration 0's step counts; the datasets keep their kSteps columns.
void set_step_counts(const std::string& file, std::int32_t warmup, std::int32_t measured) {
  const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
  const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
  for (const auto& [name, value] : {std::pair{"warmup_steps", warmup}, std::pair{"measured_steps", measured}}) {
    const H5Attribute attribute(MGPU_H5_CHECK(H5Aopen(group.get(), name, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Awrite(attribute.get(), H5T_NATIVE_INT32, &value));
  }
}

// Each count is checked on its own: the other one is chosen so that the total still matches the datasets' kSteps
// columns, so only the negative count's own check can refuse the file.
TEST_F(ResultsFileTest, ReaderRefusesANegativeWarmupCountAlone) {
  const std::string file = write_sample();
  set_step_counts(file, -1, kSteps + 1);
  EXPECT_EQ(reader_error(file),
            "'" + file + "': " + group_of(0) + ": ranks, warmup_steps, measured_steps or runs_completed out of range");
}

TEST_F(ResultsFileTest, ReaderRefusesANegativeMeasuredCountAlone) {
  const std::string file = write_sample();
  set_step_counts(file, kSteps + 1, -1);
  EXPECT_EQ(reader_error(file),
            "'" + file + "': " + group_of(0) + ": ranks, warmup_steps, measured_steps or runs_completed out of range");
}

TEST_F(ResultsFileTest, ReaderAcceptsZeroWarmupSteps) {
  // The lower bound itself: no warm-up is a valid file (every step measured).
  const std::string file = write_sample();
  set_step_counts(file, 0, kSteps);
  const ResultsFile read = read_results_file(file);
  EXPECT_EQ(read.configurations.at(0).metadata.configuration.training.warmup_steps, 0);
  EXPECT_EQ(read.configurations.at(0).metadata.configuration.training.measured_steps, kSteps);
}

TEST_F(ResultsFileTest, ReaderKeepsEveryAttributeAsText) {
  const std::string file = write_sample();
  {  // An attribute this build's structs do not name (as a newer writer's would be) and a float array.
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
    const std::int32_t knob = 4;
    const H5Dataspace scalar(MGPU_H5_CHECK(H5Screate(H5S_SCALAR)));
    const H5Attribute extra(
        MGPU_H5_CHECK(H5Acreate2(group.get(), "future_knob", H5T_STD_I32LE, scalar.get(), H5P_DEFAULT, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Awrite(extra.get(), H5T_NATIVE_INT32, &knob));
  }
  const ResultsFile read = read_results_file(file);
  const auto& text = read.configurations[0].attribute_text;
  EXPECT_EQ(text.at("model"), "medium");
  EXPECT_EQ(text.at("layer_widths"), "847,256,128,64,3");
  EXPECT_EQ(text.at("dropout"), "0.2");
  EXPECT_EQ(text.at("seed"), "18364758544493064720");  // exact above 2^53
  EXPECT_EQ(text.at("global_batch"), "8");
  EXPECT_EQ(text.at("future_knob"), "4");
  EXPECT_EQ(text.at("hosts"), "node0,node1");
  EXPECT_EQ(text.at("nccl_environment"), "");
  EXPECT_EQ(read.configurations[1].attribute_text.count("future_knob"), 0u);
}

// Other writers (h5py's numpy byte strings among them) store fixed-length strings: an array of them is read element
// by element, the longest filling its width with no terminator (null-padded).
TEST_F(ResultsFileTest, ReaderReadsAnArrayOfFixedLengthStrings) {
  const std::string file = write_sample();
  const std::vector<std::string> environment = {"NCCL_ALGO=Ring", "NCCL_DEBUG=WARN", "X=1"};
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(1).c_str(), H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Adelete(group.get(), "nccl_environment"));
    const std::size_t width = environment[1].size();
    std::string packed;
    for (const std::string& text : environment) packed += text + std::string(width - text.size(), '\0');
    const H5Datatype type(MGPU_H5_CHECK(H5Tcopy(H5T_C_S1)));
    MGPU_H5_CHECK(H5Tset_size(type.get(), width));
    MGPU_H5_CHECK(H5Tset_strpad(type.get(), H5T_STR_NULLPAD));
    const hsize_t count = environment.size();
    const H5Dataspace space(MGPU_H5_CHECK(H5Screate_simple(1, &count, nullptr)));
    const H5Attribute attribute(
        MGPU_H5_CHECK(H5Acreate2(group.get(), "nccl_environment", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Awrite(attribute.get(), type.get(), packed.data()));
  }
  EXPECT_EQ(read_results_file(file).configurations[1].metadata.nccl_environment, environment);
}

// A number stored as an array (another writer's, or a damaged file) is refused, not read as its first element.
TEST_F(ResultsFileTest, ReaderRefusesAnArrayWhereOneNumberBelongs) {
  const std::string file = write_sample();
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Adelete(group.get(), "global_batch"));
    const hsize_t two = 2;
    const std::int32_t batches[2] = {8, 16};
    const H5Dataspace array(MGPU_H5_CHECK(H5Screate_simple(1, &two, nullptr)));
    const H5Attribute batch(
        MGPU_H5_CHECK(H5Acreate2(group.get(), "global_batch", H5T_STD_I32LE, array.get(), H5P_DEFAULT, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Awrite(batch.get(), H5T_NATIVE_INT32, batches));
  }
  const std::string message = reader_error(file);
  EXPECT_NE(message.find("'global_batch' should be a single value"), std::string::npos) << message;
}

TEST_F(ResultsFileTest, ReaderRefusesANewerSchemaVersionNamingBoth) {
  const std::string file = write_sample();
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Attribute version(MGPU_H5_CHECK(H5Aopen(raw.get(), "schema_version", H5P_DEFAULT)));
    const std::int32_t newer = results_schema::kVersion + 1;
    MGPU_H5_CHECK(H5Awrite(version.get(), H5T_NATIVE_INT32, &newer));
  }
  const std::string message = reader_error(file);
  EXPECT_NE(message.find("schema_version " + std::to_string(results_schema::kVersion + 1)), std::string::npos)
      << message;
  EXPECT_NE(message.find("schema_version " + std::to_string(results_schema::kVersion)), std::string::npos) << message;
}

// Rewrites the sample as a file of schema_version 1: no implementation attribute, no wall_per_step_ms dataset.
void make_version_1(const std::string& file, int configurations) {
  const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
  const H5Attribute version(MGPU_H5_CHECK(H5Aopen(raw.get(), "schema_version", H5P_DEFAULT)));
  const std::int32_t one = 1;
  MGPU_H5_CHECK(H5Awrite(version.get(), H5T_NATIVE_INT32, &one));
  for (int config = 0; config < configurations; ++config) {
    MGPU_H5_CHECK(H5Adelete_by_name(raw.get(), group_of(config).c_str(), "implementation", H5P_DEFAULT));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(config) + "/wall_per_step_ms").c_str(), H5P_DEFAULT));
  }
}

TEST_F(ResultsFileTest, ReaderGivesAVersion1FileTheDefaultsOfNewerAttributes) {
  const std::string file = write_sample();
  make_version_1(file, 2);
  const ResultsFile results = read_results_file(file);
  EXPECT_EQ(results.root.schema_version, 1);
  ASSERT_EQ(results.configurations.size(), 2u);
  EXPECT_EQ(results.configurations[0].metadata.implementation, "mgpu_bench");
  // A dataset a later version added reads as NaN ("not measured") of the shape the file's runs and ranks give it.
  EXPECT_EQ(results_schema::dataset_added_in("wall_per_step_ms"), 3);
  EXPECT_EQ(results_schema::dataset_added_in("step_ms"), 1);
  for (const ConfigurationResults& c : results.configurations) {
    const auto& wall = c.measurements.wall_per_step_ms;
    EXPECT_EQ(wall.shape, (std::vector<std::size_t>{kRuns, kRanks}));
    ASSERT_EQ(wall.values.size(), std::size_t(kRuns * kRanks));
    for (double value : wall.values) EXPECT_TRUE(std::isnan(value));
    EXPECT_EQ(c.measurements.sm_clock_mhz.at(0, 0), synthetic_sm_clock(0, 0));  // the others read as before
  }
}

TEST_F(ResultsFileTest, ReaderRequiresTheDatasetsOfItsOwnVersion) {
  const std::string file = write_sample();
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(0) + "/wall_per_step_ms").c_str(), H5P_DEFAULT));
  }
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing dataset 'wall_per_step_ms'");
}

TEST_F(ResultsFileTest, ReaderRequiresTheAttributesOfItsOwnVersion) {
  const std::string file = write_sample();
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Adelete_by_name(raw.get(), group_of(0).c_str(), "implementation", H5P_DEFAULT));
  }
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'implementation'");
}

TEST_F(ResultsFileTest, ReaderKeepsAnotherImplementationsName) {
  const std::string file = path("peer.h5");
  {
    ResultsWriter writer(file, false);
    ConfigurationMetadata metadata = synthetic_metadata(0);
    metadata.implementation = "pytorch-ddp";
    writer.add_configuration(metadata);
  }
  EXPECT_EQ(read_results_file(file).configurations.at(0).metadata.implementation, "pytorch-ddp");
}

TEST_F(ResultsFileTest, FusedOptimizerRoundTrips) {
  // A 1-GPU configuration that ran with the fused optimizer (the only GPU count it runs on).
  ConfigurationMetadata metadata = synthetic_metadata(1);
  metadata.name = "large_b32_n1_cuda";
  metadata.configuration.gpus = 1;
  metadata.local_batch = metadata.global_batch();
  for (auto* per_rank :
       {&metadata.hosts, &metadata.gpu_names, &metadata.gpu_uuids, &metadata.gpu_pci_bus_ids, &metadata.peer_topology})
    per_rank->resize(1);
  metadata.max_sm_clock_mhz.resize(1);
  metadata.max_memory_clock_mhz.resize(1);
  metadata.configuration.training.fused_optimizer = true;
  const std::string file = path("fused.h5");
  write_one_configuration(file, metadata, {synthetic_record(1, 0, 0)});
  {
    const H5File raw = open_read_only(file);
    EXPECT_EQ(raw_string(raw.get(), "/configurations/large_b32_n1_cuda", "fused_optimizer"), "on");
  }
  const ResultsFile read = read_results_file(file);
  ASSERT_EQ(read.configurations.size(), 1u);
  const ConfigurationResults& c = read.configurations[0];
  EXPECT_EQ(c.metadata.configuration.training.fused_optimizer, true);
  EXPECT_EQ(c.attribute_text.at("fused_optimizer"), "on");
  EXPECT_EQ(attribute_texts(c.metadata), attribute_texts(metadata));
}

// Every attribute the schema added after version 1, at the version its row names: a file of the version before lacks
// it and reads (the struct's default); a file of that version lacking it is refused, naming it. Each row of the table
// is pinned here, whichever test also looks at what its default means.
TEST_F(ResultsFileTest, EachAddedAttributeIsOptionalBeforeItsVersionAndRequiredFrom) {
  int pinned = 0;
  std::vector<results_schema::AddedName> added_names(std::begin(results_schema::kAddedOtherAttributes),
                                                     std::end(results_schema::kAddedOtherAttributes));
  for (const results_schema::AttributeRoleEntry& entry : results_schema::configuration_attribute_roles())
    if (entry.since_version > 1) added_names.push_back({entry.name.data(), entry.since_version});
  for (const results_schema::AddedName& added : added_names) {
    SCOPED_TRACE(added.name);
    const std::string file = write_sample(std::string(added.name) + ".h5");
    if (MGPU_H5_CHECK(H5Aexists_by_name(open_read_only(file).get(), group_of(0).c_str(), added.name, H5P_DEFAULT)) <= 0)
      continue;  // not an attribute of a configuration's group (the root's, or a standalone measurement's)
    make_older(file, added.since_version - 1, {added.name}, 2);
    EXPECT_EQ(read_results_file(file).configurations.size(), 2u);
    make_older(file, added.since_version);
    EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute '" + added.name + "'");
    ++pinned;
  }
  EXPECT_GE(pinned, 26);  // the configuration attributes of the table
}

TEST_F(ResultsFileTest, AVersion3FileReadsFusedOptimizerAsOff) {
  EXPECT_EQ(results_schema::attribute_added_in("fused_optimizer"), 4);
  EXPECT_EQ(mgpu::attribute_texts(ConfigurationMetadata{}).at("fused_optimizer"), "off");  // analysis' default
  const std::string file = write_sample();
  make_older(file, 3, {"fused_optimizer"}, 2);  // what a schema_version 3 file looks like: everything but it
  const ResultsFile read = read_results_file(file);
  EXPECT_EQ(read.root.schema_version, 3);
  ASSERT_EQ(read.configurations.size(), 2u);
  for (const ConfigurationResults& c : read.configurations) {
    EXPECT_EQ(c.metadata.configuration.training.fused_optimizer, false);
    EXPECT_EQ(c.attribute_text.at("fused_optimizer"), "off");     // absent: the text the file implies
    EXPECT_EQ(c.metadata.configuration.training.overlap, false);  // the version-2 attributes still read
  }
  make_older(file, 4);  // a version-4 file must have it
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'fused_optimizer'");
}

TEST_F(ResultsFileTest, OverlapOrderRoundTripsAndAVersion4FileWithOverlapReadsLayerwise) {
  EXPECT_EQ(results_schema::attribute_added_in("overlap_order"), 5);
  EXPECT_EQ(mgpu::attribute_texts(ConfigurationMetadata{}).at("overlap_order"), "n/a");  // overlap off
  ConfigurationMetadata metadata = synthetic_metadata(0);
  metadata.configuration.training.overlap = true;
  metadata.configuration.training.overlap_order = WeightGradientOrder::deferred;
  const std::string file = path("order.h5");
  write_one_configuration(file, metadata, synthetic_run(0, 0));
  EXPECT_EQ(raw_string(open_read_only(file).get(), group_of(0), "overlap_order"), "deferred");
  EXPECT_EQ(read_results_file(file).configurations.at(0).metadata.configuration.training.overlap_order,
            WeightGradientOrder::deferred);
  // What a schema_version 4 file with overlap looks like: no overlap_order; its overlap was layerwise, the only one.
  make_older(file, 4, {"overlap_order"});
  const ConfigurationResults older = read_results_file(file).configurations.at(0);
  EXPECT_EQ(older.metadata.configuration.training.overlap_order, WeightGradientOrder::layerwise);
  EXPECT_EQ(older.attribute_text.at("overlap_order"), "layerwise");  // what the analyzer pairs on says so too
  make_older(file, 5);                                               // a version 5 file must have it
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'overlap_order'");
}

TEST_F(ResultsFileTest, OverlapUpdateRoundTripsAndAVersion11FileWithOverlapReadsPerBucket) {
  EXPECT_EQ(results_schema::attribute_added_in("overlap_update"), 12);
  ConfigurationMetadata metadata = synthetic_metadata(0);
  metadata.configuration.training.overlap = true;
  metadata.configuration.training.overlap_update = OverlapUpdate::after_last;
  const std::string file = path("update.h5");
  write_one_configuration(file, metadata, synthetic_run(0, 0));
  EXPECT_EQ(raw_string(open_read_only(file).get(), group_of(0), "overlap_update"), "after-last");
  EXPECT_EQ(read_results_file(file).configurations.at(0).metadata.training().overlap_update, OverlapUpdate::after_last);
  // A schema_version 11 file with overlap: no overlap_update; each bucket was updated once reduced. The text the
  // analyzer pairs on is the implied one, so an older file pairs with a newer one of the same step.
  make_older(file, 11, {"overlap_update"});
  const ConfigurationResults older = read_results_file(file).configurations.at(0);
  EXPECT_EQ(older.metadata.training().overlap_update, OverlapUpdate::per_bucket);
  EXPECT_EQ(older.attribute_text.at("overlap_update"), "per-bucket");
  EXPECT_EQ(older.attribute_text.at("overlap"), "on");  // the file's own texts stay as they are
}

TEST_F(ResultsFileTest, GemmTuningAndChoicesRoundTripAndAVersion5FileReadsAlone) {
  EXPECT_EQ(results_schema::attribute_added_in("gemm_tuning"), 6);
  EXPECT_EQ(results_schema::attribute_added_in("gemm_choices"), 6);
  ConfigurationMetadata metadata = synthetic_metadata(0);
  metadata.device = "cuda";  // only this program's CUDA step chooses GEMMs: "n/a" elsewhere
  metadata.configuration.training.gemm_tuning = GemmTuning::step;
  metadata.gemm_choices = "gemm TN m=1024 n=32 k=4800: skinny (32 columns, 8 splits, cluster sum) (19.35 us alone)\n";
  const std::string file = path("tuning.h5");
  write_one_configuration(file, metadata, synthetic_run(0, 0));
  EXPECT_EQ(raw_string(open_read_only(file).get(), group_of(0), "gemm_tuning"), "step");
  const ConfigurationMetadata read = read_results_file(file).configurations.at(0).metadata;
  EXPECT_EQ(read.configuration.training.gemm_tuning, GemmTuning::step);
  EXPECT_EQ(read.gemm_choices, metadata.gemm_choices);
  // What a schema_version 5 file looks like: neither attribute; its GEMMs were chosen alone.
  make_older(file, 5, {"gemm_tuning", "gemm_choices"});
  const ConfigurationMetadata older = read_results_file(file).configurations.at(0).metadata;
  EXPECT_EQ(older.configuration.training.gemm_tuning, GemmTuning::alone);
  EXPECT_EQ(older.gemm_choices, "");
  make_older(file, 6);  // a version 6 file must have them
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'gemm_tuning'");
}

// Version 7: which runs marked their phases (--timing interleaved makes both kinds) and the batch generation an
// unmarked run subtracted. A version 6 file lacks both datasets and reads as NaN (one kind of run: the analyzer uses
// every run for everything); a version 7 file must have them.
TEST_F(ResultsFileTest, PhaseMarksAndBatchGenerationRoundTripAndAVersion6FileReadsNaN) {
  EXPECT_GE(results_schema::kVersion, 7);
  EXPECT_EQ(results_schema::dataset_added_in("phases_marked"), 7);
  EXPECT_EQ(results_schema::dataset_added_in("batch_generation_ms"), 7);
  std::vector<RunRecord> unmarked = synthetic_run(0, 0);
  for (int rank = 0; rank < kRanks; ++rank) {
    unmarked[rank].phases_marked = false;
    unmarked[rank].batch_generation_ms = 0.25 + rank;
  }
  const std::string file = path("marks.h5");
  write_one_configuration(file, synthetic_metadata(0), unmarked);
  {
    const Measurements read = read_results_file(file).configurations.at(0).measurements;
    EXPECT_EQ(read.phases_marked.shape, (std::vector<std::size_t>{1, kRanks}));
    EXPECT_EQ(read.phases_marked.at(0, 0), 0.0);
    EXPECT_EQ(read.batch_generation_ms.at(0, 1), 1.25);
  }
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(0) + "/phases_marked").c_str(), H5P_DEFAULT));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(0) + "/batch_generation_ms").c_str(), H5P_DEFAULT));
  }
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing dataset 'phases_marked'");
  make_older(file, 6);
  const Measurements older = read_results_file(file).configurations.at(0).measurements;
  EXPECT_TRUE(std::isnan(older.phases_marked.at(0, 0)));
  EXPECT_TRUE(std::isnan(older.batch_generation_ms.at(0, 1)));
}

// ---- Integrity (schema_version 7): interrupted configurations, checksums, damaged and inconsistent files

TEST_F(ResultsFileTest, InterruptedRoundTripsAndAVersion6FileReadsAsNotInterrupted) {
  EXPECT_GE(results_schema::kVersion, 7);
  EXPECT_EQ(results_schema::attribute_added_in("interrupted"), 7);
  EXPECT_EQ(results_schema::attribute_added_in("interrupted_utc"), 7);
  const std::string file = path("interrupted.h5");
  {
    ResultsWriter writer(file, false);
    ResultsWriter::Configuration configuration = writer.add_configuration(synthetic_metadata(0));
    writer.append_run(configuration, synthetic_run(0, 0));
    writer.mark_interrupted(configuration, "SIGTERM");
    writer.close();
  }
  const ConfigurationResults read = read_results_file(file).configurations.at(0);
  EXPECT_EQ(read.progress.interrupted, "SIGTERM");
  EXPECT_FALSE(read.progress.interrupted_utc.empty());
  EXPECT_EQ(read.progress.complete, 0);
  EXPECT_EQ(read.progress.runs_completed, 1);
  // What a schema_version 6 file looks like: neither attribute; it was not marked.
  make_older(file, 6, {"interrupted", "interrupted_utc"});
  EXPECT_EQ(read_results_file(file).configurations.at(0).progress.interrupted, "");
  make_older(file, 7);  // a version 7 file must have them
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'interrupted'");
}

// Every per-run dataset is compressed (byte shuffle, then deflate) and each chunk checksummed, in that order (h5py's),
// so that a results grid fits the archive and any HDF5 reader decompresses it unasked; is_warmup, a byte per step
// written once, is checksummed alone.
TEST_F(ResultsFileTest, EveryDatasetIsShuffledDeflatedAndCheckSummed) {
  const std::string file = write_sample();
  const H5File raw = open_read_only(file);
  ASSERT_GT(MGPU_H5_CHECK(H5Zfilter_avail(H5Z_FILTER_DEFLATE)), 0) << "this HDF5 has no deflate filter";
  for (const char* name : {"step_ms", "forward_ms", "loss", "throttled", "is_warmup"}) {
    const bool per_run = std::string(name) != "is_warmup";
    const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(raw.get(), (group_of(0) + "/" + name).c_str(), H5P_DEFAULT)));
    const H5PropertyList create(MGPU_H5_CHECK(H5Dget_create_plist(dataset.get())));
    std::vector<H5Z_filter_t> filters;
    for (int i = 0; i < MGPU_H5_CHECK(H5Pget_nfilters(create.get())); ++i) {
      unsigned flags = 0;
      std::size_t count = 0;
      filters.push_back(
          H5Pget_filter2(create.get(), static_cast<unsigned>(i), &flags, &count, nullptr, 0, nullptr, nullptr));
    }
    const std::vector<H5Z_filter_t> expected =
        per_run ? std::vector<H5Z_filter_t>{H5Z_FILTER_SHUFFLE, H5Z_FILTER_DEFLATE, H5Z_FILTER_FLETCHER32}
                : std::vector<H5Z_filter_t>{H5Z_FILTER_FLETCHER32};
    EXPECT_EQ(filters, expected) << name;
  }
}

TEST_F(ResultsFileTest, ATruncatedFileIsNamedAsSuchWithoutInternals) {
  const std::string whole = write_sample();
  const std::string cut = path("cut.h5");
  {
    std::ifstream in(whole, std::ios::binary);
    std::string bytes(3000, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(cut, std::ios::binary).write(bytes.data(), in.gcount());
  }
  const std::string message = reader_error(cut);
  EXPECT_NE(message.find("is truncated or not an mgpu_bench results file"), std::string::npos) << message;
  EXPECT_EQ(message.find("src/"), std::string::npos) << message;
}

TEST_F(ResultsFileTest, AChangedByteFailsTheChecksum) {
  const std::string file = write_sample();
  haddr_t chunk_address = 0;
  {
    const H5File raw = open_read_only(file);
    const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(raw.get(), (group_of(0) + "/step_ms").c_str(), H5P_DEFAULT)));
    const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
    hsize_t offset[3] = {};
    unsigned filter_mask = 0;
    hsize_t size = 0;
    MGPU_H5_CHECK(H5Dget_chunk_info(dataset.get(), space.get(), 0, offset, &filter_mask, &chunk_address, &size));
  }
  {
    std::fstream bytes(file, std::ios::binary | std::ios::in | std::ios::out);
    bytes.seekg(static_cast<std::streamoff>(chunk_address) + 5);
    const char original = static_cast<char>(bytes.get());
    bytes.seekp(static_cast<std::streamoff>(chunk_address) + 5);
    bytes.put(static_cast<char>(original ^ 0x5a));
  }
  const std::string message = reader_error(file);
  EXPECT_NE(message.find("is corrupted or truncated"), std::string::npos) << message;
  EXPECT_EQ(message.find("src/"), std::string::npos) << message;
}

TEST_F(ResultsFileTest, RunsCompletedBeyondTheStoredRunsIsReportedNotTrusted) {
  const std::string file = path("claims.h5");
  write_one_configuration(file, synthetic_metadata(0), synthetic_run(0, 0));
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
    const H5Attribute runs(MGPU_H5_CHECK(H5Aopen(group.get(), "runs_completed", H5P_DEFAULT)));
    const std::int32_t claimed = 5;
    MGPU_H5_CHECK(H5Awrite(runs.get(), H5T_NATIVE_INT32, &claimed));
  }
  const std::string message = reader_error(file);
  EXPECT_NE(message.find("runs_completed is 5 but dataset"), std::string::npos) << message;
  EXPECT_NE(message.find("holds only 1 runs"), std::string::npos) << message;
}

// ---- Standalone groups: /allreduce and /probe, next to /configurations

results_schema::MeasurementConditions synthetic_conditions(int ranks) {
  results_schema::MeasurementConditions c;
  c.device = "cuda";
  c.ranks = ranks;
  c.nccl_environment = {"NCCL_NVLS_ENABLE=0"};
  c.command_line = "mgpu_bench allreduce --max-bytes 64";
  c.nccl_version = "2.28.3";
  for (int r = 0; r < ranks; ++r) {
    c.hosts.push_back("node" + std::to_string(r));
    c.gpu_names.push_back("NVIDIA H200");
    c.gpu_uuids.push_back("GPU-" + std::to_string(r));
    c.gpu_pci_bus_ids.push_back("0000:00:0" + std::to_string(6 + r) + ".0");
    c.peer_topology.push_back("rank " + std::to_string(1 - r) + " NVLink yes");
  }
  return c;
}

// 2 runs, 2 ranks, 3 sizes; every time says where it belongs.
AllreduceSweep synthetic_sweep() {
  AllreduceSweep s;
  s.conditions = synthetic_conditions(2);
  s.dtype = "fp32";
  s.timed_operation = "ncclAllReduce ncclAvg fp32, in place";
  s.data_check = "ncclSum exact";
  s.data_check_passed = 1;
  s.iterations = 20;
  s.warmup_iterations = 5;
  s.runs = 2;
  s.size_labels = {"", "medium gradient", ""};
  s.bytes = {{3}, {8, 1033728, 64}};
  s.elements = {{3}, {2, 258432, 16}};
  s.wrong_elements = {{3}, {0, 0, 0}};
  s.time_ms.shape = s.op_ms.shape = {2, 2, 3};
  s.algbw_gbps.shape = s.busbw_gbps.shape = {2, 3};
  for (int run = 0; run < 2; ++run)
    for (int rank = 0; rank < 2; ++rank)
      for (int size = 0; size < 3; ++size) {
        s.time_ms.values.push_back(0.01 * (1 + run) + 0.001 * rank + 0.0001 * size);
        s.op_ms.values.push_back(0.02 * (1 + run) + 0.001 * rank + 0.0001 * size);
      }
  for (int run = 0; run < 2; ++run)
    for (int size = 0; size < 3; ++size) {
      s.algbw_gbps.values.push_back(run + 0.5 * size);
      s.busbw_gbps.values.push_back(run + 0.5 * size);
    }
  return s;
}

TEST_F(ResultsFileTest, AllreduceSweepGoesNextToTheTrainingConfigurations) {
  const std::string file = write_sample();
  write_allreduce_sweep(file, synthetic_sweep(), false);
  const ResultsFile results = read_results_file(file);  // the training data are untouched
  EXPECT_EQ(results.configurations.size(), 2u);
  const AllreduceSweep back = read_allreduce_sweep(file);
  const AllreduceSweep sent = synthetic_sweep();
  EXPECT_EQ(back.conditions.hosts, sent.conditions.hosts);
  EXPECT_EQ(back.conditions.implementation, "mgpu_bench");
  EXPECT_FALSE(back.conditions.started_utc.empty());
  EXPECT_EQ(back.size_labels, sent.size_labels);
  EXPECT_EQ(back.bytes.values, sent.bytes.values);
  EXPECT_EQ(back.time_ms.shape, sent.time_ms.shape);
  EXPECT_EQ(back.time_ms.at(1, 1, 2), sent.time_ms.at(1, 1, 2));
  EXPECT_EQ(back.op_ms.values, sent.op_ms.values);
  EXPECT_EQ(back.busbw_gbps.values, sent.busbw_gbps.values);
  EXPECT_EQ(back.data_check_passed, 1);
  // As h5py sees it: the group, its datasets' types and units.
  const H5File raw = open_read_only(file);
  EXPECT_EQ(dataset_type(raw.get(), "/allreduce/time_ms"), "f8");
  EXPECT_EQ(dataset_type(raw.get(), "/allreduce/bytes"), "i8");
  EXPECT_EQ(raw_string(raw.get(), "/allreduce/busbw_gbps", "units"), "GB/s");
  EXPECT_EQ(raw_dataset(raw.get(), "/allreduce/time_ms").dims, (std::vector<hsize_t>{2, 2, 3}));
}

TEST_F(ResultsFileTest, AllreduceSweepIsReplacedOnlyWhenAsked) {
  const std::string file = path("new.h5");
  check_can_add_group(file, "allreduce", false);  // a new file is fine
  EXPECT_FALSE(fs::exists(file));                 // and the check creates nothing
  write_allreduce_sweep(file, synthetic_sweep(), false);
  EXPECT_EQ(read_results_file(file).configurations.size(), 0u);  // a valid, empty results file around it
  try {
    write_allreduce_sweep(file, synthetic_sweep(), false);
    ADD_FAILURE() << "a second /allreduce was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "output file '" + file + "' already has /allreduce; use --force to replace it");
  }
  AllreduceSweep second = synthetic_sweep();
  second.size_labels = {"a", "b", "c"};
  write_allreduce_sweep(file, second, true);
  EXPECT_EQ(read_allreduce_sweep(file).size_labels, second.size_labels);
}

// A new file is created exclusively: a link left at the path to a file that does not exist is refused, not followed
// to create the file it names somewhere else.
TEST_F(ResultsFileTest, AllreduceSweepIsNotWrittenThroughALinkToNoFile) {
  const std::string link = path("link.h5");
  const std::string target = path("elsewhere.h5");
  fs::create_symlink(target, link);
  EXPECT_THROW(write_allreduce_sweep(link, synthetic_sweep(), false), Error);
  EXPECT_FALSE(fs::exists(target)) << "the sweep was written through the link";
  EXPECT_TRUE(fs::is_symlink(link));
}

TEST_F(ResultsFileTest, AllreduceSweepRefusesAnOlderFileAndInconsistentShapes) {
  const std::string old_file = write_sample("old.h5");
  make_version_1(old_file, 2);
  try {
    check_can_add_group(old_file, "allreduce", false);
    ADD_FAILURE() << "a version 1 file was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("has schema_version 1"), std::string::npos) << e.what();
  }
  AllreduceSweep bad = synthetic_sweep();
  bad.time_ms.shape = {2, 3, 2};  // runs and ranks swapped with sizes: same count, wrong shape
  const std::string file = path("bad.h5");
  EXPECT_THROW(write_allreduce_sweep(file, bad, false), UsageError);
  EXPECT_FALSE(fs::exists(file)) << "a refused sweep left a file";
  std::ofstream(path("text.h5")) << "not hdf5";
  EXPECT_THROW(check_can_add_group(path("text.h5"), "allreduce", true), UsageError);
}

TEST_F(ResultsFileTest, HardwareProbeRoundTrip) {
  HardwareProbe probe;
  probe.conditions = synthetic_conditions(1);
  probe.iterations = 20;
  probe.runs = 2;
  probe.copy_labels = {"1 MiB"};
  probe.gemm_labels = {"large b32 L0 forward", "square 8192"};
  probe.gemm_precisions = {"fp32", "tf32", "bf16"};
  probe.launch_labels = {"kernel_launch", "graph_node", "graph_launch"};
  probe.copy_bytes = {{1}, {1 << 20}};
  probe.copy_ms = {{2, 1}, {0.001, 0.002}};
  probe.gemm_shape = {{2, 3}, {1024, 32, 4800, 8192, 8192, 8192}};
  probe.launch_ms = {{2, 3}, {0.002, 0.001, 0.003, 0.0021, 0.0011, 0.0031}};
  probe.gemm_ms.shape = {2, 3, 2};
  for (int i = 0; i < 12; ++i) probe.gemm_ms.values.push_back(0.01 * (i + 1));
  const std::string file = write_sample();
  write_allreduce_sweep(file, synthetic_sweep(), false);
  write_hardware_probe(file, probe, false);
  const HardwareProbe back = read_hardware_probe(file);
  EXPECT_EQ(back.gemm_labels, probe.gemm_labels);
  EXPECT_EQ(back.gemm_shape.values, probe.gemm_shape.values);
  EXPECT_EQ(back.gemm_ms.shape, probe.gemm_ms.shape);
  EXPECT_EQ(back.gemm_ms.at(1, 2, 1), probe.gemm_ms.at(1, 2, 1));
  EXPECT_EQ(back.launch_ms.values, probe.launch_ms.values);
  EXPECT_TRUE(back.step_labels.empty());  // a probe that timed no step unit has neither labels nor data
  EXPECT_TRUE(back.step_ms.values.empty());
  EXPECT_EQ(read_allreduce_sweep(file).bytes.values, synthetic_sweep().bytes.values);  // both groups in one file
  // Version 8: the step's own units round-trip; labels without their data are a damaged file.
  probe.step_labels = {"large b32 L0 forward", "large b32 adam"};
  probe.step_ms = {{2, 2}, {0.01, 0.02, 0.011, 0.021}};
  write_hardware_probe(file, probe, true);
  const HardwareProbe units = read_hardware_probe(file);
  EXPECT_EQ(units.step_labels, probe.step_labels);
  EXPECT_EQ(units.step_ms.shape, probe.step_ms.shape);
  EXPECT_EQ(units.step_ms.values, probe.step_ms.values);
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), "/probe/step_ms", H5P_DEFAULT));
  }
  EXPECT_THROW(read_hardware_probe(file), UsageError);
  EXPECT_THROW(read_hardware_probe(path("absent.h5")), UsageError);
}

TEST_F(ResultsFileTest, ReaderNamesTheFileGroupAndMissingDataset) {
  const std::string file = write_sample();
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(1) + "/loss").c_str(), H5P_DEFAULT));
  }
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(1) + ": missing dataset 'loss'");
}

// A per-run dataset of the wrong shape is named with its shape and the one expected, whose run count is a floor.
TEST_F(ResultsFileTest, ADatasetOfTheWrongShapeIsNamedWithBothShapes) {
  const std::string file = path("shape.h5");
  write_one_configuration(file, synthetic_metadata(0), synthetic_run(0, 0));
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Ldelete(raw.get(), (group_of(0) + "/loss").c_str(), H5P_DEFAULT));
    const hsize_t dims[2] = {1, kSteps + 1};
    const H5Dataspace space(MGPU_H5_CHECK(H5Screate_simple(2, dims, nullptr)));
    const H5Dataset loss(MGPU_H5_CHECK(H5Dcreate2(raw.get(), (group_of(0) + "/loss").c_str(), H5T_NATIVE_DOUBLE,
                                                  space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  }
  const std::string message = reader_error(file);
  EXPECT_NE(message.find("dataset 'loss' has shape [1, " + std::to_string(kSteps + 1) + "], expected [>= 1, " +
                         std::to_string(kSteps) + "]"),
            std::string::npos)
      << message;
}

// ---- Older files and resuming

TEST_F(ResultsFileTest, AnOlderFileWithoutNewerAttributesReadsAsDefaults) {
  const std::string file = write_sample();
  {
    // What a schema_version 1 file of the core looks like: no environment_preset, no attempt.
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Attribute version(MGPU_H5_CHECK(H5Aopen(raw.get(), "schema_version", H5P_DEFAULT)));
    const std::int32_t first = 1;
    MGPU_H5_CHECK(H5Awrite(version.get(), H5T_NATIVE_INT32, &first));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Adelete(group.get(), "environment_preset"));
    MGPU_H5_CHECK(H5Adelete(group.get(), "attempt"));
  }
  EXPECT_EQ(results_schema::attribute_added_in("environment_preset"), 2);
  EXPECT_EQ(results_schema::attribute_added_in("seed"), 1);
  const ResultsFile read = read_results_file(file);
  EXPECT_EQ(read.configurations[0].metadata.environment_preset, "none");
  EXPECT_EQ(read.configurations[0].metadata.attempt, 1);
  // An original attribute stays required.
  {
    const H5File raw(MGPU_H5_CHECK(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(raw.get(), group_of(0).c_str(), H5P_DEFAULT)));
    MGPU_H5_CHECK(H5Adelete(group.get(), "seed"));
  }
  EXPECT_EQ(reader_error(file), "'" + file + "': " + group_of(0) + ": missing attribute 'seed'");
}

TEST_F(ResultsFileTest, ResumeReplacesAConfigurationAndKeepsTheOthers) {
  const std::string file = write_sample();
  EXPECT_NO_THROW(ResultsWriter::check_can_resume(file));
  EXPECT_NO_THROW(ResultsWriter::check_can_resume(path("not-yet.h5")));  // a resumed sweep may start the file
  EXPECT_THROW(ResultsWriter::check_can_resume(path("no/such/dir/x.h5")), UsageError);
  {
    ResultsWriter writer = ResultsWriter::open_for_resume(file);
    writer.remove_configuration(kConfigurationNames[0]);
    ConfigurationMetadata again = synthetic_metadata(0);
    again.attempt = 2;
    again.environment_preset = "pcie-host-bridge";
    ResultsWriter::Configuration configuration = writer.add_configuration(again);
    writer.append_run(configuration, synthetic_run(0, 0));
    writer.finish(configuration);
    writer.close();
  }
  const ResultsFile read = read_results_file(file);
  ASSERT_EQ(read.configurations.size(), 2u);
  // The untouched configuration keeps everything; the replaced one comes last (creation order) with its one run.
  EXPECT_EQ(read.configurations[0].metadata.name, kConfigurationNames[1]);
  EXPECT_EQ(read.configurations[0].runs(), kRuns);
  EXPECT_EQ(read.configurations[0].metadata.attempt, 1);
  EXPECT_EQ(read.configurations[1].metadata.name, kConfigurationNames[0]);
  EXPECT_EQ(read.configurations[1].runs(), 1);
  EXPECT_EQ(read.configurations[1].metadata.attempt, 2);
  EXPECT_EQ(read.configurations[1].metadata.environment_preset, "pcie-host-bridge");
  EXPECT_EQ(read.configurations[1].progress.complete, 1);
}

// ---- The checking macro

TEST(Hdf5Check, ThrowsTheInnermostDescriptionWithoutPrintingTheStack) {
  testing::internal::CaptureStderr();
  try {
    MGPU_H5_CHECK(H5Fopen("/nonexistent/mgpu/file.h5", H5F_ACC_RDONLY, H5P_DEFAULT));
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("H5Fopen(\"/nonexistent/mgpu/file.h5\", H5F_ACC_RDONLY, H5P_DEFAULT): HDF5: "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
    EXPECT_NE(message.find("tests/results/test_results_file.cpp:"), std::string::npos) << message;
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(MGPU_H5_WARN(H5Gclose(H5I_INVALID_HID)), -1);  // warns, does not throw
}

}  // namespace
