// Purpose: the results writer of results_writer.hpp, through the generic helpers of hdf5_io.hpp driven by the lists
// in results_schema.hpp (no per-attribute or per-dataset code).
#include "results/results_writer.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <utility>

#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "platform/hdf5_check.hpp"
#include "results/disk_space.hpp"
#include "results/hdf5_handles.hpp"
#include "results/hdf5_io.hpp"

namespace mgpu {
namespace {

namespace fs = std::filesystem;
using namespace hdf5_io;
using results_schema::Measurements;
using results_schema::RootMetadata;

// The filters of a chunked dataset, in h5py's order: with `compressed`, byte shuffle and deflate (timings of one
// phase share their exponent and leading mantissa bytes, so a results grid fits the archive; any HDF5 reader, h5py
// and h5dump included, decompresses them unasked), then every chunk's checksum (v7): a reader refuses a run whose
// bytes changed on disk instead of analysing them. An HDF5 built without zlib writes the chunks uncompressed.
void add_chunk_filters(hid_t create, bool compressed) {
  constexpr unsigned kDeflateLevel = 4;  // most of level 9's gain at a fraction of its time
  if (compressed && MGPU_H5_CHECK(H5Zfilter_avail(H5Z_FILTER_DEFLATE)) > 0) {
    MGPU_H5_CHECK(H5Pset_shuffle(create));
    MGPU_H5_CHECK(H5Pset_deflate(create, kDeflateLevel));
  }
  MGPU_H5_CHECK(H5Pset_fletcher32(create));
}

// A per-run dataset: zero runs, unlimited along the runs dimension, one run per chunk (an append writes exactly one
// chunk, and a reader's hyperslab of whole runs reads whole chunks).
template <typename T>
void create_run_dataset(hid_t group, const DatasetSpec& spec, std::size_t ranks, std::size_t steps) {
  const std::vector<hsize_t> dims = to_hsize(schema::extent_shape(spec.extent, 0, ranks, steps));
  std::vector<hsize_t> max_dims = dims;
  max_dims[0] = H5S_UNLIMITED;
  const std::vector<hsize_t> chunk = to_hsize(schema::extent_shape(spec.extent, 1, ranks, steps));
  const H5Dataspace space = make_dataspace(dims, &max_dims);
  const H5PropertyList create(MGPU_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)));
  MGPU_H5_CHECK(H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()));
  add_chunk_filters(create.get(), true);
  const H5Dataset dataset(MGPU_H5_CHECK(
      H5Dcreate2(group, spec.name.c_str(), H5Type<T>::file(), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT)));
  describe_dataset(dataset.get(), spec);
}

// A dataset written once, whole, at creation (is_warmup).
template <typename T>
void write_fixed_dataset(hid_t group, const DatasetSpec& spec, const std::vector<T>& values) {
  const H5Dataspace space = make_dataspace({values.size()});
  // One chunk of the whole array (the checksum needs a chunked layout), not compressed: a byte per step.
  const H5PropertyList create(MGPU_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE)));
  const hsize_t chunk = std::max<hsize_t>(values.size(), 1);
  MGPU_H5_CHECK(H5Pset_chunk(create.get(), 1, &chunk));
  add_chunk_filters(create.get(), false);
  const H5Dataset dataset(MGPU_H5_CHECK(
      H5Dcreate2(group, spec.name.c_str(), H5Type<T>::file(), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT)));
  MGPU_H5_CHECK(H5Dwrite(dataset.get(), H5Type<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()));
  describe_dataset(dataset.get(), spec);
}

// Grows the runs dimension by row.shape[0] and writes row into the new rows.
template <typename T>
void append_rows(hid_t group, const DatasetSpec& spec, const ResultArray<T>& row) {
  const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(group, spec.name.c_str(), H5P_DEFAULT)));
  const std::vector<hsize_t> count = to_hsize(row.shape);
  std::vector<hsize_t> dims(count.size());
  {
    const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
    MGPU_REQUIRE(MGPU_H5_CHECK(H5Sget_simple_extent_ndims(space.get())) == static_cast<int>(count.size()),
                 "dataset " + spec.name + " has an unexpected rank");
    MGPU_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  }
  std::vector<hsize_t> start(count.size(), 0);
  start[0] = dims[0];
  dims[0] += count[0];
  MGPU_H5_CHECK(H5Dset_extent(dataset.get(), dims.data()));
  // The extent changed: only a dataspace fetched after it covers the new rows.
  const H5Dataspace file_space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
  MGPU_H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr));
  const H5Dataspace memory_space = make_dataspace(count);
  MGPU_H5_CHECK(H5Dwrite(dataset.get(), H5Type<T>::memory(), memory_space.get(), file_space.get(), H5P_DEFAULT,
                         row.values.data()));
}

// One run of every rank as the rows to append (runs dimension = 1).
Measurements measurements_of_run(const std::vector<RunRecord>& per_rank, int measured_steps) {
  const std::size_t ranks = per_rank.size();
  const std::size_t steps = static_cast<std::size_t>(per_rank.front().total_steps);
  Measurements row;
  for (int p = 0; p < kPhaseCount; ++p) {
    row.phase_ms[p].shape = {1, ranks, steps};
    for (const RunRecord& record : per_rank)
      for (std::size_t s = 0; s < steps; ++s) row.phase_ms[p].values.push_back(record.ms(Phase(p), int(s)));
  }
  row.loss.shape = {1, steps};
  for (std::size_t s = 0; s < steps; ++s) {
    double sum = 0;
    for (const RunRecord& record : per_rank) sum += record.loss[s];
    row.loss.values.push_back(sum / static_cast<double>(ranks));
  }
  for (auto* per_rank_array :
       {&row.sm_clock_mhz.shape, &row.memory_clock_mhz.shape, &row.memory_peak_bytes.shape, &row.clock_samples.shape,
        &row.throttled.shape, &row.wall_per_step_ms.shape, &row.phases_marked.shape, &row.batch_generation_ms.shape})
    *per_rank_array = {1, ranks};
  for (std::size_t r = 0; r < ranks; ++r) {
    const RunRecord& record = per_rank[r];
    row.memory_peak_bytes.values.push_back(std::llround(record.memory_peak_bytes));
    row.sm_clock_mhz.values.push_back(record.sm_clock_mhz);
    row.memory_clock_mhz.values.push_back(record.memory_clock_mhz);
    row.clock_samples.values.push_back(record.clock_samples);
    row.throttled.values.push_back(record.throttled ? 1 : 0);
    // The trainer's wall span of the measured steps (RunRecord::measured_wall_ms) per measured step; NaN when the
    // configuration has no measured steps.
    row.wall_per_step_ms.values.push_back(measured_steps > 0 ? record.measured_wall_ms / measured_steps
                                                             : std::numeric_limits<double>::quiet_NaN());
    row.phases_marked.values.push_back(record.phases_marked ? 1.0 : 0.0);
    row.batch_generation_ms.values.push_back(record.batch_generation_ms);
  }
  return row;
}

void check_metadata(const ConfigurationMetadata& m) {
  const std::string& name = m.name;
  MGPU_REQUIRE(!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos,
               "configuration name '" + name + "' is not a valid HDF5 group name");
  MGPU_REQUIRE(m.ranks() >= 1, "configuration '" + name + "': ranks must be at least 1");
  MGPU_REQUIRE(m.training().warmup_steps >= 0 && m.training().measured_steps >= 0 && m.total_steps() >= 1,
               "configuration '" + name + "': needs at least one step");
  const auto check_per_rank = [&](const char* field, std::size_t size) {
    MGPU_REQUIRE(size == static_cast<std::size_t>(m.ranks()),
                 "configuration '" + name + "': " + field + " has " + std::to_string(size) +
                     " entries, expected one per rank (" + std::to_string(m.ranks()) + ")");
  };
  check_per_rank("hosts", m.hosts.size());
  check_per_rank("gpu_names", m.gpu_names.size());
  check_per_rank("gpu_uuids", m.gpu_uuids.size());
  check_per_rank("gpu_pci_bus_ids", m.gpu_pci_bus_ids.size());
  check_per_rank("peer_topology", m.peer_topology.size());
  check_per_rank("max_sm_clock_mhz", m.max_sm_clock_mhz.size());
  check_per_rank("max_memory_clock_mhz", m.max_memory_clock_mhz.size());
}

// Names of the configuration groups in the order they were added (the writer tracks creation order); name order for

template <typename T>
void write_whole_dataset(hid_t group, const schema::FixedDatasetSpec& spec, const ResultArray<T>& array) {
  MGPU_REQUIRE(array.values.size() == element_count(array.shape) && !array.shape.empty(),
               "dataset " + spec.name + ": " + std::to_string(array.values.size()) + " values for shape " +
                   shape_text(to_hsize(array.shape)));
  const H5Dataspace space = make_dataspace(to_hsize(array.shape));
  const H5Dataset dataset(MGPU_H5_CHECK(
      H5Dcreate2(group, spec.name.c_str(), H5Type<T>::file(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
  if (!array.values.empty())
    MGPU_H5_CHECK(H5Dwrite(dataset.get(), H5Type<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, array.values.data()));
  describe_dataset(dataset.get(), spec);
}

void stamp_times(schema::MeasurementConditions& conditions) {
  if (conditions.started_utc.empty()) conditions.started_utc = utc_timestamp_now();
  if (conditions.finished_utc.empty()) conditions.finished_utc = utc_timestamp_now();
}

void check_per_rank_conditions(const std::string& path, const schema::MeasurementConditions& c) {
  MGPU_REQUIRE(c.ranks >= 1, "'" + path + "': a standalone measurement needs at least one rank");
  for (const auto* per_rank : {&c.hosts, &c.gpu_names, &c.gpu_uuids, &c.gpu_pci_bus_ids, &c.peer_topology})
    MGPU_REQUIRE(per_rank->size() == static_cast<std::size_t>(c.ranks),
                 "'" + path + "': a per-rank condition has " + std::to_string(per_rank->size()) + " entries for " +
                     std::to_string(c.ranks) + " ranks");
}

// Creates `path` as a results file when it does not exist (root attributes, empty /configurations), else opens it;
// replaces /<name> when asked; writes the group through `body`, flushes. A failure removes the half-written group,
// and the file when this call created it.
template <typename Body>
void write_standalone_group(const std::string& path, const char* name, bool replace,
                            const schema::MeasurementConditions& conditions, Body&& body) {
  check_per_rank_conditions(path, conditions);
  check_can_add_group(path, name, replace);
  std::error_code ignored;
  const bool created = !fs::exists(path, ignored);
  if (created) ResultsWriter(path, false).close();
  try {
    naming_file(path, [&] {
      const H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
      if (MGPU_H5_CHECK(H5Lexists(file.get(), name, H5P_DEFAULT)) > 0)
        MGPU_H5_CHECK(H5Ldelete(file.get(), name, H5P_DEFAULT));
      {
        const H5Group group(MGPU_H5_CHECK(H5Gcreate2(file.get(), name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
        try {
          body(group.get());
        } catch (...) {
          MGPU_H5_WARN(H5Ldelete(file.get(), name, H5P_DEFAULT));
          throw;
        }
      }
      MGPU_H5_CHECK(H5Fflush(file.get(), H5F_SCOPE_GLOBAL));
    });
  } catch (...) {
    if (created) fs::remove(path, ignored);
    throw;
  }
}

}  // namespace

// ---- ResultsWriter

struct ResultsWriter::Impl {
  std::string path;
  H5File file;
  H5Group configurations;
};

void ResultsWriter::check_can_create(const std::string& path, bool overwrite) {
  const fs::path file(path);
  if (path.empty() || !file.has_filename()) throw UsageError("output file '" + path + "' is not a file name");
  std::error_code ignored;  // a path that cannot be examined reads as absent and is reported below
  const fs::file_status status = fs::status(file, ignored);
  if (fs::exists(status)) {
    if (!overwrite) throw UsageError("output file '" + path + "' exists; use --force to overwrite");
    if (fs::is_directory(status)) throw UsageError("output file '" + path + "' is a directory");
    if (::access(path.c_str(), W_OK) != 0) throw UsageError("output file '" + path + "' is not writable");
    return;  // truncating an existing file needs no right on its directory
  }
  const fs::path directory = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const fs::file_status directory_status = fs::status(directory, ignored);
  const std::string cannot = "cannot create output file '" + path + "': directory '" + directory.string() + "' ";
  if (!fs::exists(directory_status)) throw UsageError(cannot + "does not exist");
  if (!fs::is_directory(directory_status)) throw UsageError(cannot + "is not a directory");
  if (::access(directory.c_str(), W_OK | X_OK) != 0) throw UsageError(cannot + "is not writable");
}

ResultsWriter::ResultsWriter(const std::string& path, bool overwrite) : impl_(std::make_unique<Impl>()) {
  check_can_create(path, overwrite);
  impl_->path = path;
  naming_file(path, [&] {
    impl_->file = H5File(
        MGPU_H5_CHECK(H5Fcreate(path.c_str(), overwrite ? H5F_ACC_TRUNC : H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT)));
    try {
      RootMetadata root;
      root.project_version = project_version();
      root.git_revision = git_revision();
      root.created_utc = utc_timestamp_now();
      schema::for_each_attribute_of_root(root, AttributeWriter{impl_->file.get()});
      // Track creation order so readers list configurations in the order they ran, not alphabetically.
      const H5PropertyList create(MGPU_H5_CHECK(H5Pcreate(H5P_GROUP_CREATE)));
      MGPU_H5_CHECK(H5Pset_link_creation_order(create.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED));
      impl_->configurations = H5Group(MGPU_H5_CHECK(
          H5Gcreate2(impl_->file.get(), schema::kConfigurationsGroup, H5P_DEFAULT, create.get(), H5P_DEFAULT)));
      MGPU_H5_CHECK(H5Fflush(impl_->file.get(), H5F_SCOPE_GLOBAL));
    } catch (...) {
      // A file without its root attributes is not a results file; leave nothing behind.
      impl_->configurations.reset();
      impl_->file.reset();
      std::error_code ignored;
      fs::remove(path, ignored);
      throw;
    }
  });
}

void ResultsWriter::check_can_resume(const std::string& path) {
  std::error_code ignored;
  const fs::file_status status = fs::status(path, ignored);
  if (!fs::exists(status)) return check_can_create(path, false);
  if (!fs::is_regular_file(status)) throw UsageError("--resume: output file '" + path + "' is not a file");
  if (::access(path.c_str(), R_OK | W_OK) != 0)
    throw UsageError("--resume: output file '" + path + "' is not writable");
}

ResultsWriter ResultsWriter::open_for_resume(const std::string& path) {
  ResultsWriter writer;
  writer.impl_ = std::make_unique<Impl>();
  writer.impl_->path = path;
  naming_file(path, [&] {
    writer.impl_->file = H5File(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)));
    writer.impl_->configurations =
        H5Group(MGPU_H5_CHECK(H5Gopen2(writer.impl_->file.get(), schema::kConfigurationsGroup, H5P_DEFAULT)));
  });
  return writer;
}

void ResultsWriter::remove_configuration(const std::string& name) {
  Impl& impl = this->impl();
  naming_file(impl.path, [&] {
    // The link goes; HDF5 does not reclaim the space (h5repack does), which costs only file size.
    if (MGPU_H5_CHECK(H5Lexists(impl.configurations.get(), name.c_str(), H5P_DEFAULT)) > 0)
      MGPU_H5_CHECK(H5Ldelete(impl.configurations.get(), name.c_str(), H5P_DEFAULT));
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
  });
}

ResultsWriter::ResultsWriter() = default;
ResultsWriter::~ResultsWriter() = default;  // Impl's handles close the group, then the file
ResultsWriter::ResultsWriter(ResultsWriter&&) noexcept = default;
ResultsWriter& ResultsWriter::operator=(ResultsWriter&&) noexcept = default;

ResultsWriter::Impl& ResultsWriter::impl() const {
  MGPU_REQUIRE(impl_ != nullptr && impl_->file.valid(), "the results file is closed");
  return *impl_;
}

const std::string& ResultsWriter::path() const { return impl().path; }

ResultsWriter::Configuration ResultsWriter::add_configuration(const ConfigurationMetadata& metadata) {
  Impl& impl = this->impl();
  return naming_file(impl.path, [&] {
    check_metadata(metadata);
    MGPU_REQUIRE(MGPU_H5_CHECK(H5Lexists(impl.configurations.get(), metadata.name.c_str(), H5P_DEFAULT)) == 0,
                 "configuration '" + metadata.name + "' already exists");
    Configuration configuration;
    configuration.writer_ = &impl;
    configuration.name_ = metadata.name;
    configuration.ranks_ = metadata.ranks();
    configuration.steps_ = metadata.total_steps();
    configuration.measured_steps_ = metadata.training().measured_steps;

    const H5Group group(MGPU_H5_CHECK(
        H5Gcreate2(impl.configurations.get(), metadata.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
    ConfigurationMetadata stamped = metadata;
    if (stamped.started_utc.empty()) stamped.started_utc = utc_timestamp_now();
    const AttributeWriter write{group.get()};
    schema::for_each_attribute_of_configuration(stamped, write);
    schema::for_each_attribute_of_progress(configuration.progress_, write);

    std::vector<std::uint8_t> is_warmup(static_cast<std::size_t>(metadata.total_steps()), 0);
    std::fill_n(is_warmup.begin(), metadata.training().warmup_steps, 1);
    write_fixed_dataset(group.get(), schema::is_warmup_dataset(), is_warmup);
    const Measurements prototype;  // only its element types matter here
    schema::for_each_dataset(prototype, [&](const DatasetSpec& spec, const auto& array) {
      create_run_dataset<ElementOf<decltype(array)>>(group.get(), spec, metadata.ranks(), metadata.total_steps());
    });
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
    return configuration;
  });
}

std::uintmax_t ResultsWriter::free_space_to_append_run(int ranks, int steps) {
  // Room for the run's values (their checksummed chunks, the grown indexes, the progress attributes) and the
  // interrupted mark that may follow, with a wide margin: HDF5 cannot take back half an append.
  constexpr std::uintmax_t kMetadataMarginBytes = 64 * 1024;
  return 4 * static_cast<std::uintmax_t>(ranks) * RunRecord::packed_size(steps) * sizeof(double) + kMetadataMarginBytes;
}

void ResultsWriter::append_run(Configuration& configuration, const std::vector<RunRecord>& per_rank) {
  Impl& impl = this->impl();
  naming_file(impl.path, [&] {
    const std::string& name = configuration.name_;
    MGPU_REQUIRE(configuration.writer_ == &impl, "configuration '" + name + "' belongs to another results file");
    MGPU_REQUIRE(!configuration.finished(), "configuration '" + name + "' is finished; no more runs");
    MGPU_REQUIRE(per_rank.size() == static_cast<std::size_t>(configuration.ranks_),
                 "configuration '" + name + "': " + std::to_string(per_rank.size()) + " run records for " +
                     std::to_string(configuration.ranks_) + " ranks");
    const auto steps = static_cast<std::size_t>(configuration.steps_);
    for (const RunRecord& record : per_rank)
      MGPU_REQUIRE(record.total_steps == configuration.steps_ && record.loss.size() == steps &&
                       record.phase_ms.size() == steps * kPhaseCount,
                   "configuration '" + name + "': a run record has " + std::to_string(record.total_steps) +
                       " steps, expected " + std::to_string(steps));

    require_free_space(impl.path, free_space_to_append_run(configuration.ranks_, configuration.steps_));
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(impl.configurations.get(), name.c_str(), H5P_DEFAULT)));
    const Measurements row = measurements_of_run(per_rank, configuration.measured_steps_);
    schema::for_each_dataset(
        row, [&](const DatasetSpec& spec, const auto& array) { append_rows(group.get(), spec, array); });
    // runs_completed moves only after every dataset holds the run: it is what readers trust.
    ConfigurationProgress progress = configuration.progress_;
    ++progress.runs_completed;
    schema::for_each_attribute_of_progress(progress, AttributeWriter{group.get()});
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
    configuration.progress_ = progress;
  });
}

void ResultsWriter::write_progress(Configuration& configuration, const ConfigurationProgress& progress) {
  Impl& impl = this->impl();
  naming_file(impl.path, [&] {
    MGPU_REQUIRE(configuration.writer_ == &impl,
                 "configuration '" + configuration.name_ + "' belongs to another results file");
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(impl.configurations.get(), configuration.name_.c_str(), H5P_DEFAULT)));
    schema::for_each_attribute_of_progress(progress, AttributeWriter{group.get()});
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
    configuration.progress_ = progress;
  });
}

void ResultsWriter::record_replica_check(Configuration& configuration, const std::string& replica_check) {
  ConfigurationProgress progress = configuration.progress_;
  progress.replica_check = replica_check;
  write_progress(configuration, progress);
}

void ResultsWriter::finish(Configuration& configuration, const std::string& stopped_early) {
  ConfigurationProgress progress = configuration.progress_;
  progress.complete = 1;
  progress.stopped_early = stopped_early;
  progress.finished_utc = utc_timestamp_now();
  write_progress(configuration, progress);
}

void ResultsWriter::mark_interrupted(Configuration& configuration, const std::string& reason) {
  ConfigurationProgress progress = configuration.progress_;
  progress.interrupted = reason;
  progress.interrupted_utc = utc_timestamp_now();
  write_progress(configuration, progress);
}

void ResultsWriter::close() {
  if (impl_ == nullptr) return;
  naming_file(impl_->path, [&] {
    impl_->configurations.close();
    impl_->file.close();
  });
}

// ---- Standalone groups (/allreduce, /probe): written whole into a new file or an existing one of this version.

void check_can_add_group(const std::string& path, const std::string& group, bool replace) {
  std::error_code ignored;
  const fs::file_status status = fs::status(path, ignored);
  if (!fs::exists(status)) {
    ResultsWriter::check_can_create(path, false);
    return;
  }
  if (!fs::is_regular_file(status)) throw UsageError("output file '" + path + "' is not a file");
  if (::access(path.c_str(), W_OK) != 0) throw UsageError("output file '" + path + "' is not writable");
  naming_file(path, [&] {
    if (MGPU_H5_CHECK(H5Fis_hdf5(path.c_str())) == 0)
      throw UsageError("output file '" + path + "' exists and is not an HDF5 file");
    const H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));
    const RootMetadata root = read_root_metadata(path, file.get());
    // Adding a group of this version to an older file would leave the file's schema_version wrong for one part.
    if (root.schema_version != schema::kVersion)
      throw UsageError("output file '" + path + "' has schema_version " + std::to_string(root.schema_version) + "; /" +
                       group + " can only be added to a file of schema_version " + std::to_string(schema::kVersion) +
                       " (or a new file)");
    if (MGPU_H5_CHECK(H5Lexists(file.get(), group.c_str(), H5P_DEFAULT)) > 0 && !replace)
      throw UsageError("output file '" + path + "' already has /" + group + "; use --force to replace it");
  });
}

void write_allreduce_sweep(const std::string& path, const AllreduceSweep& sweep, bool replace) {
  check_standalone_sizes(path, sweep);
  write_standalone_group(path, schema::kAllreduceGroup, replace, sweep.conditions, [&](hid_t group) {
    AllreduceSweep stamped = sweep;
    stamp_times(stamped.conditions);
    schema::for_each_attribute_of_allreduce(stamped, AttributeWriter{group});
    schema::for_each_dataset_of_allreduce(sweep, [&](const schema::FixedDatasetSpec& spec, const auto& array) {
      write_whole_dataset(group, spec, array);
    });
  });
}

void write_hardware_probe(const std::string& path, const HardwareProbe& probe, bool replace) {
  write_standalone_group(path, schema::kProbeGroup, replace, probe.conditions, [&](hid_t group) {
    HardwareProbe stamped = probe;
    stamp_times(stamped.conditions);
    schema::for_each_attribute_of_probe(stamped, AttributeWriter{group});
    schema::for_each_dataset_of_probe(probe, [&](const schema::FixedDatasetSpec& spec, const auto& array) {
      if (spec.name == "step_ms" && probe.step_labels.empty()) return;  // optional: a probe that timed no step unit
      write_whole_dataset(group, spec, array);
    });
  });
}
}  // namespace mgpu
