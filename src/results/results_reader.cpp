// Purpose: the results reader of results_reader.hpp: every attribute and dataset checked against the schema, every
// failure of a file's contents one line naming the file and the object.
#include "results/results_reader.hpp"

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
#include "results/hdf5_handles.hpp"
#include "results/hdf5_io.hpp"

namespace mgpu {
namespace {

namespace fs = std::filesystem;
using namespace hdf5_io;

// Reads the first `runs` rows of a per-run dataset (or all of a fixed one) after checking its shape.
template <typename T>
void read_dataset(const Where& where, hid_t group, const DatasetSpec& spec, std::size_t runs, std::size_t ranks,
                  std::size_t steps, ResultArray<T>& out) {
  if (MGPU_H5_CHECK(H5Lexists(group, spec.name.c_str(), H5P_DEFAULT)) <= 0)
    where.fail("missing dataset '" + spec.name + "'");
  const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(group, spec.name.c_str(), H5P_DEFAULT)));
  const H5Dataspace file_space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
  out.shape = schema::extent_shape(spec.extent, runs, ranks, steps);
  const std::vector<hsize_t> expected = to_hsize(out.shape);
  std::vector<hsize_t> dims(expected.size());
  const bool same_rank =
      MGPU_H5_CHECK(H5Sget_simple_extent_ndims(file_space.get())) == static_cast<int>(expected.size());
  bool fits = same_rank;
  if (fits) MGPU_H5_CHECK(H5Sget_simple_extent_dims(file_space.get(), dims.data(), nullptr));
  const bool per_run = spec.extent != Extent::steps;
  for (std::size_t d = 0; fits && d < dims.size(); ++d)
    fits = (per_run && d == 0) ? dims[d] >= expected[d] : dims[d] == expected[d];
  if (same_rank && per_run && !expected.empty() && dims[0] < expected[0]) {
    where.fail("runs_completed is " + std::to_string(expected[0]) + " but dataset '" + spec.name + "' holds only " +
               std::to_string(dims[0]) + " runs; the file is inconsistent and is not used");
  }
  if (!fits) {
    std::string wanted = shape_text(expected);
    if (per_run) wanted.insert(1, ">= ");
    where.fail("dataset '" + spec.name + "' has shape " + shape_text(dims) + ", expected " + wanted);
  }
  out.values.assign(element_count(out.shape), T{});
  if (out.values.empty()) return;  // a zero-count hyperslab is an error in HDF5
  const std::vector<hsize_t> start(expected.size(), 0);
  MGPU_H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, expected.data(), nullptr));
  const H5Dataspace memory_space = make_dataspace(expected);
  MGPU_H5_CHECK(H5Dread(dataset.get(), H5Type<T>::memory(), memory_space.get(), file_space.get(), H5P_DEFAULT,
                        out.values.data()));
}

// a group that does not track it.
std::vector<std::string> configuration_names(hid_t configurations) {
  const H5PropertyList create(MGPU_H5_CHECK(H5Gget_create_plist(configurations)));
  unsigned order_flags = 0;
  MGPU_H5_CHECK(H5Pget_link_creation_order(create.get(), &order_flags));
  const H5_index_t index = (order_flags & H5P_CRT_ORDER_INDEXED) != 0 ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME;
  H5G_info_t info{};
  MGPU_H5_CHECK(H5Gget_info(configurations, &info));
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t length =
        MGPU_H5_CHECK(H5Lget_name_by_idx(configurations, ".", index, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT));
    std::string name(static_cast<std::size_t>(length) + 1, '\0');
    MGPU_H5_CHECK(
        H5Lget_name_by_idx(configurations, ".", index, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT));
    name.resize(static_cast<std::size_t>(length));
    names.push_back(std::move(name));
  }
  return names;
}

ConfigurationResults read_configuration(const std::string& path, hid_t configurations, const std::string& name,
                                        std::int32_t file_version) {
  const Where where{path, configuration_path(name)};
  const H5Group group(MGPU_H5_CHECK(H5Gopen2(configurations, name.c_str(), H5P_DEFAULT)));
  ConfigurationResults result;
  result.metadata.name = name;
  const AttributeReader read{where, group.get(), file_version};
  try {
    schema::for_each_attribute_of_configuration(result.metadata, read);
  } catch (const schema::SettingTextError& error) {
    where.fail(error.what());
  }
  schema::for_each_attribute_of_progress(result.progress, read);
  TrainingSettings& training = result.metadata.configuration.training;
  // Before version 5 the only overlap there was reduced layer by layer.
  if (file_version < schema::attribute_added_in(attribute_of(&TrainingSettings::overlap_order)) && training.overlap)
    training.overlap_order = WeightGradientOrder::layerwise;
  training.runs = runs_made(result.metadata.configuration.runs_requested, training.timing);
  result.attribute_text = all_attributes_as_text(where, group.get());
  if (file_version < schema::kVersion) {  // a file of this version has every attribute (the reader requires them)
    for (auto& [attribute, implied] : attribute_texts(result.metadata))
      result.attribute_text.emplace(attribute, std::move(implied));  // the file's own text, where it has one
  }
  const ConfigurationMetadata& m = result.metadata;
  if (m.ranks() < 1 || training.warmup_steps < 0 || training.measured_steps < 0 || m.total_steps() < 1 ||
      result.progress.runs_completed < 0)
    where.fail("ranks, warmup_steps, measured_steps or runs_completed out of range");
  const auto runs = static_cast<std::size_t>(result.progress.runs_completed);
  const auto ranks = static_cast<std::size_t>(m.ranks());
  const auto steps = static_cast<std::size_t>(m.total_steps());
  ResultArray<std::uint8_t> is_warmup;
  read_dataset(where, group.get(), schema::is_warmup_dataset(), runs, ranks, steps, is_warmup);
  result.is_warmup = std::move(is_warmup.values);
  schema::for_each_dataset(result.measurements, [&](const DatasetSpec& spec, auto& array) {
    using T = ElementOf<decltype(array)>;
    // A dataset newer than the file's schema version may be absent: NaN of the right shape ("not measured").
    if constexpr (std::is_floating_point_v<T>) {
      if (file_version < schema::dataset_added_in(spec.name) &&
          MGPU_H5_CHECK(H5Lexists(group.get(), spec.name.c_str(), H5P_DEFAULT)) <= 0) {
        array.shape = schema::extent_shape(spec.extent, runs, ranks, steps);
        array.values.assign(element_count(array.shape), std::numeric_limits<T>::quiet_NaN());
        return;
      }
    }
    read_dataset(where, group.get(), spec, runs, ranks, steps, array);
  });
  return result;
}

// Reads a whole dataset of whatever shape it has; the caller checks the shape against the attributes.
template <typename T>
void read_whole_dataset(const Where& where, hid_t group, const schema::FixedDatasetSpec& spec, ResultArray<T>& out) {
  if (MGPU_H5_CHECK(H5Lexists(group, spec.name.c_str(), H5P_DEFAULT)) <= 0)
    where.fail("missing dataset '" + spec.name + "'");
  const H5Dataset dataset(MGPU_H5_CHECK(H5Dopen2(group, spec.name.c_str(), H5P_DEFAULT)));
  const H5Dataspace space(MGPU_H5_CHECK(H5Dget_space(dataset.get())));
  const int rank = MGPU_H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) MGPU_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  out.shape.assign(dims.begin(), dims.end());
  out.values.assign(element_count(out.shape), T{});
  if (!out.values.empty())
    MGPU_H5_CHECK(H5Dread(dataset.get(), H5Type<T>::memory(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.values.data()));
}

// Like naming_file, for reading a whole file: an HDF5 failure past the checks of the reader's own (a dataset whose
// checksum fails, a chunk beyond the end of a truncated file) is damage on disk, said in the user's words with HDF5's
// innermost message, never the call that saw it.
template <typename Body>
decltype(auto) naming_damage(const std::string& path, Body&& body) {
  try {
    return body();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& error) {
    const std::string what = error.what();
    const std::size_t last = what.rfind(": ");
    const std::string detail = last == std::string::npos ? what : what.substr(last + 2);
    throw UsageError("'" + path + "' is corrupted or truncated: reading it failed (HDF5: " + detail + ")");
  }
}

template <typename Body>
void read_standalone_group(const std::string& path, const char* name, Body&& body) {
  std::error_code ignored;
  if (!fs::exists(path, ignored)) throw UsageError("'" + path + "' does not exist");
  naming_file(path, [&] {
    RootMetadata root;
    const H5File file = open_for_reading(path, root);
    if (MGPU_H5_CHECK(H5Lexists(file.get(), name, H5P_DEFAULT)) <= 0)
      throw UsageError("'" + path + "' has no /" + std::string(name) + " group");
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(file.get(), name, H5P_DEFAULT)));
    const Where where{path, std::string("/") + name};
    body(where, AttributeReader{where, group.get(), root.schema_version}, group.get());
  });
}

}  // namespace

// ---- Reader

double ConfigurationResults::distributed_step_ms(int run, int step) const {
  const ResultArray<double>& step_ms = measurements.phase_ms[static_cast<int>(Phase::step)];
  double slowest = step_ms.at(run, 0, step);
  for (int rank = 1; rank < ranks(); ++rank) slowest = std::max(slowest, step_ms.at(run, rank, step));
  return slowest;
}

const ConfigurationResults& ResultsFile::configuration(const std::string& name) const {
  for (const ConfigurationResults& configuration : configurations)
    if (configuration.metadata.name == name) return configuration;
  throw UsageError("'" + path + "': no configuration '" + name + "'");
}

ResultsFile read_results_file(const std::string& path) {
  std::error_code ignored;
  const fs::file_status status = fs::status(path, ignored);
  if (!fs::exists(status)) throw UsageError("'" + path + "' does not exist");
  if (!fs::is_regular_file(status)) throw UsageError("'" + path + "' is not a file");
  if (fs::file_size(path, ignored) == 0) throw UsageError("'" + path + "' is empty (0 bytes), not a results file");
  return naming_damage(path, [&] {
    ResultsFile result;
    result.path = path;
    const H5File file = open_for_reading(path, result.root);
    const Where root_where{path, "/"};
    if (MGPU_H5_CHECK(H5Lexists(file.get(), schema::kConfigurationsGroup, H5P_DEFAULT)) <= 0)
      root_where.fail(std::string("missing group '") + schema::kConfigurationsGroup + "'");
    const H5Group configurations(MGPU_H5_CHECK(H5Gopen2(file.get(), schema::kConfigurationsGroup, H5P_DEFAULT)));
    for (const std::string& name : configuration_names(configurations.get()))
      result.configurations.push_back(read_configuration(path, configurations.get(), name, result.root.schema_version));
    return result;
  });
}

AllreduceSweep read_allreduce_sweep(const std::string& path) {
  AllreduceSweep sweep;
  read_standalone_group(
      path, schema::kAllreduceGroup, [&](const Where& where, const AttributeReader& read, hid_t group) {
        schema::for_each_attribute_of_allreduce(sweep, read);
        schema::for_each_dataset_of_allreduce(sweep, [&](const schema::FixedDatasetSpec& spec, auto& array) {
          read_whole_dataset(where, group, spec, array);
        });
      });
  check_standalone_sizes(path, sweep);
  return sweep;
}

HardwareProbe read_hardware_probe(const std::string& path) {
  HardwareProbe probe;
  read_standalone_group(path, schema::kProbeGroup, [&](const Where& where, const AttributeReader& read, hid_t group) {
    schema::for_each_attribute_of_probe(probe, read);
    schema::for_each_dataset_of_probe(probe, [&](const schema::FixedDatasetSpec& spec, auto& array) {
      // The step's units are optional (a probe older than version 8, or one that timed none): no labels, no data.
      if (spec.name == "step_ms" && probe.step_labels.empty()) return;
      read_whole_dataset(where, group, spec, array);
    });
    if (!probe.step_labels.empty() &&
        (probe.step_ms.shape.size() != 2 || probe.step_ms.shape[1] != probe.step_labels.size()))
      where.fail("step_ms does not hold [runs, " + std::to_string(probe.step_labels.size()) + " step labels]");
  });
  return probe;
}

}  // namespace mgpu
