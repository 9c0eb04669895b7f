// Purpose: writing and reading the HDF5 results file through generic attribute and dataset helpers driven by the
// lists in results_schema.hpp (no per-attribute or per-dataset code).
#include "results/results_file.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <type_traits>
#include <utility>

#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "platform/hdf5_check.hpp"
#include "results/hdf5_handles.hpp"

namespace mgpu {
namespace {

namespace fs = std::filesystem;
namespace schema = results_schema;
using schema::DatasetSpec;
using schema::Extent;

// ---- Element types: the file always stores little-endian standard types (portable, what h5py and numpy expect);
// memory uses the native ones and HDF5 converts.

template <typename T>
struct H5Type;
template <>
struct H5Type<double> {
  static hid_t memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t file() { return H5T_IEEE_F64LE; }
};
template <>
struct H5Type<std::int64_t> {
  static hid_t memory() { return H5T_NATIVE_INT64; }
  static hid_t file() { return H5T_STD_I64LE; }
};
template <>
struct H5Type<std::uint64_t> {
  static hid_t memory() { return H5T_NATIVE_UINT64; }
  static hid_t file() { return H5T_STD_U64LE; }
};
template <>
struct H5Type<std::int32_t> {
  static hid_t memory() { return H5T_NATIVE_INT32; }
  static hid_t file() { return H5T_STD_I32LE; }
};
template <>
struct H5Type<std::uint8_t> {
  static hid_t memory() { return H5T_NATIVE_UINT8; }
  static hid_t file() { return H5T_STD_U8LE; }
};

// Variable-length UTF-8: h5py returns str, h5dump prints the text.
H5Datatype utf8_string_type() {
  H5Datatype type(MGPU_H5_CHECK(H5Tcopy(H5T_C_S1)));
  MGPU_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE));
  MGPU_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  return type;
}

// Scalar for no dimensions; a zero-length dimension (an empty nccl_environment) is valid and reads as an empty array.
H5Dataspace make_dataspace(const std::vector<hsize_t>& dims, const std::vector<hsize_t>* max_dims = nullptr) {
  if (dims.empty()) return H5Dataspace(MGPU_H5_CHECK(H5Screate(H5S_SCALAR)));
  return H5Dataspace(MGPU_H5_CHECK(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims != nullptr ? max_dims->data() : nullptr)));
}

std::vector<hsize_t> to_hsize(const std::vector<std::size_t>& shape) { return {shape.begin(), shape.end()}; }

std::size_t element_count(const std::vector<std::size_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

std::string shape_text(const std::vector<hsize_t>& dims) {
  std::string text = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(dims[d]);
  return text + "]";
}

// ---- Writing attributes. Creates the attribute, or rewrites it in place when it exists (progress updates keep
// their type and shape).

void write_attribute_data(hid_t object, const char* name, hid_t file_type, hid_t memory_type,
                          const std::vector<hsize_t>& dims, const void* data) {
  // H5Awrite rejects a null buffer even for zero elements.
  static const char empty = 0;
  H5Dataspace space = make_dataspace(dims);
  H5Attribute attribute(
      MGPU_H5_CHECK(H5Aexists(object, name)) > 0
          ? MGPU_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT))
          : MGPU_H5_CHECK(H5Acreate2(object, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT)));
  MGPU_H5_CHECK(H5Awrite(attribute.get(), memory_type, data != nullptr ? data : &empty));
}

template <typename T>
void write_attribute(hid_t object, const char* name, const T& value) {
  static_assert(std::is_arithmetic_v<T>, "numbers, strings and vectors of them");
  write_attribute_data(object, name, H5Type<T>::file(), H5Type<T>::memory(), {}, &value);
}
template <typename T>
void write_attribute(hid_t object, const char* name, const std::vector<T>& values) {
  write_attribute_data(object, name, H5Type<T>::file(), H5Type<T>::memory(), {values.size()}, values.data());
}
void write_attribute(hid_t object, const char* name, const std::string& value) {
  const H5Datatype type = utf8_string_type();
  const char* text = value.c_str();
  write_attribute_data(object, name, type.get(), type.get(), {}, &text);
}
void write_attribute(hid_t object, const char* name, const std::vector<std::string>& values) {
  const H5Datatype type = utf8_string_type();
  std::vector<const char*> texts;
  for (const std::string& value : values) texts.push_back(value.c_str());
  write_attribute_data(object, name, type.get(), type.get(), {texts.size()}, texts.data());
}

// The visitor the schema's for_each_attribute_* lists call on the writing side.
struct AttributeWriter {
  hid_t object;
  template <typename Value>
  void operator()(const char* name, const Value& value) const {
    write_attribute(object, name, value);
  }
};

// ---- Reading attributes. Every failure of the file's contents names the file and the object ("where").

struct Where {
  const std::string& file;
  std::string object;  // "/" or "/configurations/<name>"
  [[noreturn]] void fail(const std::string& problem) const {
    throw UsageError("'" + file + "': " + object + ": " + problem);
  }
};

// Opens the attribute, checks its type class and that it holds one value (scalar) or a 1-D array; returns its
// element count.
std::pair<H5Attribute, hssize_t> open_attribute(const Where& where, hid_t object, const char* name, bool scalar,
                                                std::initializer_list<H5T_class_t> classes) {
  if (MGPU_H5_CHECK(H5Aexists(object, name)) <= 0) where.fail(std::string("missing attribute '") + name + "'");
  H5Attribute attribute(MGPU_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT)));
  const H5Datatype type(MGPU_H5_CHECK(H5Aget_type(attribute.get())));
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (std::find(classes.begin(), classes.end(), type_class) == classes.end())
    where.fail(std::string("attribute '") + name + "' has the wrong type");
  const H5Dataspace space(MGPU_H5_CHECK(H5Aget_space(attribute.get())));
  const int rank = MGPU_H5_CHECK(H5Sget_simple_extent_ndims(space.get()));
  const hssize_t count = MGPU_H5_CHECK(H5Sget_simple_extent_npoints(space.get()));
  if (scalar ? count != 1 : rank > 1)
    where.fail(std::string("attribute '") + name + "' should be " + (scalar ? "a single value" : "a 1-D array"));
  return {std::move(attribute), count};
}

template <typename T>
std::vector<T> read_numbers(const Where& where, hid_t object, const char* name, bool scalar) {
  auto [attribute, count] = open_attribute(where, object, name, scalar, {H5T_INTEGER, H5T_FLOAT});
  std::vector<T> values(static_cast<std::size_t>(count));
  if (count > 0) MGPU_H5_CHECK(H5Aread(attribute.get(), H5Type<T>::memory(), values.data()));
  return values;
}

// Variable-length strings (ours) and fixed-length ones (another tool's), in whatever character set the file says.
std::vector<std::string> read_strings(const Where& where, hid_t object, const char* name, bool scalar) {
  auto [attribute, count] = open_attribute(where, object, name, scalar, {H5T_STRING});
  const H5Datatype file_type(MGPU_H5_CHECK(H5Aget_type(attribute.get())));
  const H5Datatype memory_type(MGPU_H5_CHECK(H5Tcopy(H5T_C_S1)));
  MGPU_H5_CHECK(H5Tset_cset(memory_type.get(), MGPU_H5_CHECK(H5Tget_cset(file_type.get()))));
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::string> values;
  if (n == 0) return values;
  if (MGPU_H5_CHECK(H5Tis_variable_str(file_type.get())) > 0) {
    MGPU_H5_CHECK(H5Tset_size(memory_type.get(), H5T_VARIABLE));
    // HDF5 allocates each string; free them even if copying throws.
    struct Owned {
      std::vector<char*> texts;
      ~Owned() {
        for (char* text : texts) H5free_memory(text);
      }
    } owned{std::vector<char*>(n, nullptr)};
    MGPU_H5_CHECK(H5Aread(attribute.get(), memory_type.get(), owned.texts.data()));
    for (const char* text : owned.texts) values.emplace_back(text != nullptr ? text : "");
  } else {
    // One extra byte so HDF5 always writes the terminator, whatever padding the file uses.
    const std::size_t size = H5Tget_size(file_type.get());  // 0 on failure, not negative
    if (size == 0) throw_call_error("HDF5", __FILE__, __LINE__, "H5Tget_size(file_type.get())", hdf5_error_message());
    const std::size_t width = size + 1;
    MGPU_H5_CHECK(H5Tset_size(memory_type.get(), width));
    MGPU_H5_CHECK(H5Tset_strpad(memory_type.get(), H5T_STR_NULLTERM));
    std::vector<char> buffer(n * width, '\0');
    MGPU_H5_CHECK(H5Aread(attribute.get(), memory_type.get(), buffer.data()));
    for (std::size_t i = 0; i < n; ++i) values.emplace_back(buffer.data() + i * width);
  }
  return values;
}

// The visitor the schema's for_each_attribute_* lists call on the reading side. An attribute newer than the file's
// schema version may be absent: the value keeps its default (results_schema::attribute_added_in).
struct AttributeReader {
  const Where& where;
  hid_t object;
  std::int32_t file_version = schema::kVersion;
  bool absent_from_older_file(const char* name) const {
    return file_version < schema::attribute_added_in(name) && MGPU_H5_CHECK(H5Aexists(object, name)) <= 0;
  }
  template <typename T>
  void operator()(const char* name, T& value) const {
    static_assert(std::is_arithmetic_v<T>, "numbers, strings and vectors of them");
    if (!absent_from_older_file(name)) value = read_numbers<T>(where, object, name, true).front();
  }
  template <typename T>
  void operator()(const char* name, std::vector<T>& values) const {
    if (!absent_from_older_file(name)) values = read_numbers<T>(where, object, name, false);
  }
  void operator()(const char* name, std::string& value) const {
    if (!absent_from_older_file(name)) value = read_strings(where, object, name, true).front();
  }
  void operator()(const char* name, std::vector<std::string>& values) const {
    if (!absent_from_older_file(name)) values = read_strings(where, object, name, false);
  }
};

// Every attribute of an object as text (integers exactly, floats in shortest round-trip form, arrays joined by ","),
// including ones this build's structs do not name: readers such as mgpu_analyze key configurations on them.
std::map<std::string, std::string> all_attributes_as_text(const Where& where, hid_t object) {
  std::vector<std::string> names;
  const auto collect = [](hid_t, const char* name, const H5A_info_t*, void* data) -> herr_t {
    static_cast<std::vector<std::string>*>(data)->emplace_back(name);
    return 0;
  };
  MGPU_H5_CHECK(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names));
  std::map<std::string, std::string> texts;
  for (const std::string& name : names) {
    const H5Attribute attribute(MGPU_H5_CHECK(H5Aopen(object, name.c_str(), H5P_DEFAULT)));
    const H5Datatype type(MGPU_H5_CHECK(H5Aget_type(attribute.get())));
    std::vector<std::string> parts;
    switch (H5Tget_class(type.get())) {
      case H5T_STRING:
        parts = read_strings(where, object, name.c_str(), false);
        break;
      case H5T_INTEGER:  // exact, also above 2^53 (seeds)
        if (H5Tget_sign(type.get()) == H5T_SGN_NONE) {
          for (const std::uint64_t number : read_numbers<std::uint64_t>(where, object, name.c_str(), false))
            parts.push_back(std::to_string(number));
        } else {
          for (const std::int64_t number : read_numbers<std::int64_t>(where, object, name.c_str(), false))
            parts.push_back(std::to_string(number));
        }
        break;
      case H5T_FLOAT:
        for (const double number : read_numbers<double>(where, object, name.c_str(), false))
          parts.push_back(shortest_double_text(number));
        break;
      default:
        continue;  // compound, enum, ...: not ours, nothing to key on
    }
    std::string joined;
    for (std::size_t i = 0; i < parts.size(); ++i) joined += (i > 0 ? "," : "") + parts[i];
    texts.emplace(name, std::move(joined));
  }
  return texts;
}

// ---- Datasets

template <typename Spec>  // DatasetSpec or schema::FixedDatasetSpec
void describe_dataset(hid_t dataset, const Spec& spec) {
  write_attribute(dataset, schema::kUnitsAttribute, spec.units);
  write_attribute(dataset, schema::kDescriptionAttribute, spec.description);
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
  const H5Dataset dataset(MGPU_H5_CHECK(
      H5Dcreate2(group, spec.name.c_str(), H5Type<T>::file(), space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT)));
  describe_dataset(dataset.get(), spec);
}

// A dataset written once, whole, at creation (is_warmup).
template <typename T>
void write_fixed_dataset(hid_t group, const DatasetSpec& spec, const std::vector<T>& values) {
  const H5Dataspace space = make_dataspace({values.size()});
  const H5Dataset dataset(MGPU_H5_CHECK(
      H5Dcreate2(group, spec.name.c_str(), H5Type<T>::file(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
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
  bool fits = MGPU_H5_CHECK(H5Sget_simple_extent_ndims(file_space.get())) == static_cast<int>(expected.size());
  if (fits) MGPU_H5_CHECK(H5Sget_simple_extent_dims(file_space.get(), dims.data(), nullptr));
  const bool per_run = spec.extent != Extent::steps;
  for (std::size_t d = 0; fits && d < dims.size(); ++d)
    fits = (per_run && d == 0) ? dims[d] >= expected[d] : dims[d] == expected[d];
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

template <typename Array>
using ElementOf = typename std::decay_t<Array>::value_type;

// ---- Errors from HDF5 calls name the call but not the file; every public entry point adds it.
template <typename Body>
decltype(auto) naming_file(const std::string& path, Body&& body) {
  try {
    return body();
  } catch (const UsageError&) {
    throw;  // already one line naming the file
  } catch (const Error& error) {
    throw Error("'" + path + "': " + error.what());
  }
}

std::string configuration_path(const std::string& name) {
  return std::string("/") + schema::kConfigurationsGroup + "/" + name;
}

// One run of every rank as the rows to append (runs dimension = 1).
Measurements measurements_of_run(const std::vector<RunRecord>& per_rank, int measured_steps,
                                 const std::vector<double>& max_sm_clock_mhz) {
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
  for (auto* per_rank_array : {&row.sm_clock_mhz.shape, &row.memory_clock_mhz.shape, &row.memory_peak_bytes.shape,
                               &row.clock_samples.shape, &row.throttled.shape, &row.wall_per_step_ms.shape})
    *per_rank_array = {1, ranks};
  for (std::size_t r = 0; r < ranks; ++r) {
    const RunRecord& record = per_rank[r];
    row.memory_peak_bytes.values.push_back(std::llround(record.memory_peak_bytes));
    row.sm_clock_mhz.values.push_back(record.sm_clock_mhz);
    row.memory_clock_mhz.values.push_back(record.memory_clock_mhz);
    row.clock_samples.values.push_back(record.clock_samples);
    row.throttled.values.push_back(schema::is_throttled(record.sm_clock_mhz, max_sm_clock_mhz[r]) ? 1 : 0);
    // The trainer's wall span of the measured steps (RunRecord::measured_wall_ms) per measured step; NaN when the
    // configuration has no measured steps.
    row.wall_per_step_ms.values.push_back(measured_steps > 0 ? record.measured_wall_ms / measured_steps
                                                             : std::numeric_limits<double>::quiet_NaN());
  }
  return row;
}

void check_metadata(const ConfigurationMetadata& m) {
  const std::string& name = m.name;
  MGPU_REQUIRE(!name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos,
               "configuration name '" + name + "' is not a valid HDF5 group name");
  MGPU_REQUIRE(m.ranks >= 1, "configuration '" + name + "': ranks must be at least 1");
  MGPU_REQUIRE(m.warmup_steps >= 0 && m.measured_steps >= 0 && m.total_steps() >= 1,
               "configuration '" + name + "': needs at least one step");
  const auto check_per_rank = [&](const char* field, std::size_t size) {
    MGPU_REQUIRE(size == static_cast<std::size_t>(m.ranks),
                 "configuration '" + name + "': " + field + " has " + std::to_string(size) +
                     " entries, expected one per rank (" + std::to_string(m.ranks) + ")");
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
  schema::for_each_attribute_of_configuration(result.metadata, read);
  result.attribute_text = all_attributes_as_text(where, group.get());
  schema::for_each_attribute_of_progress(result.progress, read);
  // Before version 5 the only overlap there was reduced layer by layer (the attribute's default is "n/a").
  if (file_version < schema::attribute_added_in("overlap_order") && result.metadata.overlap == "on")
    result.metadata.overlap_order = "layerwise";
  const ConfigurationMetadata& m = result.metadata;
  if (m.ranks < 1 || m.warmup_steps < 0 || m.measured_steps < 0 || m.total_steps() < 1 ||
      result.progress.runs_completed < 0)
    where.fail("ranks, warmup_steps, measured_steps or runs_completed out of range");
  const auto runs = static_cast<std::size_t>(result.progress.runs_completed);
  const auto ranks = static_cast<std::size_t>(m.ranks);
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

// ---- Helpers of the standalone groups

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

// The root attributes, version first (a newer file may lack or retype anything else); UsageError naming the file
// for a file that is not ours, newer than this build, or invalid.
RootMetadata read_root_metadata(const std::string& path, hid_t file) {
  RootMetadata root;
  const Where where{path, "/"};
  if (MGPU_H5_CHECK(H5Aexists(file, schema::kSchemaVersionAttribute)) <= 0)
    throw UsageError("'" + path + "' is not an mgpu_bench results file (no " + schema::kSchemaVersionAttribute +
                     " attribute)");
  const AttributeReader read{where, file};
  read(schema::kSchemaVersionAttribute, root.schema_version);
  const std::int32_t version = root.schema_version;
  if (version > schema::kVersion)
    throw UsageError("'" + path + "' has schema_version " + std::to_string(version) + ", newer than schema_version " +
                     std::to_string(schema::kVersion) + " that this build reads; use a newer mgpu_bench build");
  if (version < 1) throw UsageError("'" + path + "' has an invalid schema_version " + std::to_string(version));
  schema::for_each_attribute_of_root(root, AttributeReader{where, file, version});
  if (root.producer != schema::kProducer)
    throw UsageError("'" + path + "' was written by '" + root.producer + "', not " + schema::kProducer);
  return root;
}

// Opens an existing file read-only and reads its root attributes into `root` (read_root_metadata); UsageError naming
// the file for one that is not HDF5 or not ours.
H5File open_for_reading(const std::string& path, RootMetadata& root) {
  if (MGPU_H5_CHECK(H5Fis_hdf5(path.c_str())) == 0) throw UsageError("'" + path + "' is not an HDF5 file");
  H5File file(MGPU_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));
  root = read_root_metadata(path, file.get());
  return file;
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

// The sweep's arrays agree with its attributes (runs, ranks, sizes); UsageError naming the file otherwise.
void check_standalone_sizes(const std::string& path, const AllreduceSweep& s) {
  const std::size_t sizes = s.size_labels.size();
  const auto runs = static_cast<std::size_t>(std::max(s.runs, 0));
  const auto ranks = static_cast<std::size_t>(std::max(s.conditions.ranks, 0));
  const auto expect = [&](const char* name, const std::vector<std::size_t>& shape, const std::vector<std::size_t>& want) {
    if (shape != want)
      throw UsageError("'" + path + "': /" + schema::kAllreduceGroup + ": dataset '" + name + "' has shape " +
                       shape_text(to_hsize(shape)) + ", expected " + shape_text(to_hsize(want)));
  };
  expect("bytes", s.bytes.shape, {sizes});
  expect("elements", s.elements.shape, {sizes});
  expect("time_ms", s.time_ms.shape, {runs, ranks, sizes});
  expect("op_ms", s.op_ms.shape, {runs, ranks, sizes});
  expect("algbw_gbps", s.algbw_gbps.shape, {runs, sizes});
  expect("busbw_gbps", s.busbw_gbps.shape, {runs, sizes});
  expect("wrong_elements", s.wrong_elements.shape, {sizes});
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

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string shortest_double_text(double value) {
  char text[32] = {};
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

namespace {

std::string attribute_value_text(const std::string& value) { return value; }
std::string attribute_value_text(double value) { return shortest_double_text(value); }
template <typename Integer, typename = std::enable_if_t<std::is_integral_v<Integer>>>
std::string attribute_value_text(Integer value) {
  return std::to_string(value);
}
template <typename T>
std::string attribute_value_text(const std::vector<T>& values) {
  std::string joined;
  for (std::size_t i = 0; i < values.size(); ++i) joined += (i > 0 ? "," : "") + attribute_value_text(values[i]);
  return joined;
}

}  // namespace

std::map<std::string, std::string> attribute_texts(const ConfigurationMetadata& metadata) {
  std::map<std::string, std::string> texts;
  schema::for_each_attribute_of_configuration(
      metadata, [&](const char* name, const auto& value) { texts.emplace(name, attribute_value_text(value)); });
  return texts;
}

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
  if (::access(path.c_str(), R_OK | W_OK) != 0) throw UsageError("--resume: output file '" + path + "' is not writable");
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
    configuration.ranks_ = metadata.ranks;
    configuration.steps_ = metadata.total_steps();
    configuration.measured_steps_ = metadata.measured_steps;
    configuration.max_sm_clock_mhz_ = metadata.max_sm_clock_mhz;

    const H5Group group(MGPU_H5_CHECK(
        H5Gcreate2(impl.configurations.get(), metadata.name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)));
    ConfigurationMetadata stamped = metadata;
    if (stamped.started_utc.empty()) stamped.started_utc = utc_timestamp_now();
    const AttributeWriter write{group.get()};
    schema::for_each_attribute_of_configuration(stamped, write);
    schema::for_each_attribute_of_progress(configuration.progress_, write);

    std::vector<std::uint8_t> is_warmup(static_cast<std::size_t>(metadata.total_steps()), 0);
    std::fill_n(is_warmup.begin(), metadata.warmup_steps, 1);
    write_fixed_dataset(group.get(), schema::is_warmup_dataset(), is_warmup);
    const Measurements prototype;  // only its element types matter here
    schema::for_each_dataset(prototype, [&](const DatasetSpec& spec, const auto& array) {
      create_run_dataset<ElementOf<decltype(array)>>(group.get(), spec, metadata.ranks, metadata.total_steps());
    });
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
    return configuration;
  });
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

    const H5Group group(MGPU_H5_CHECK(H5Gopen2(impl.configurations.get(), name.c_str(), H5P_DEFAULT)));
    const Measurements row =
        measurements_of_run(per_rank, configuration.measured_steps_, configuration.max_sm_clock_mhz_);
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

void ResultsWriter::finish(Configuration& configuration) {
  Impl& impl = this->impl();
  naming_file(impl.path, [&] {
    MGPU_REQUIRE(configuration.writer_ == &impl,
                 "configuration '" + configuration.name_ + "' belongs to another results file");
    const H5Group group(MGPU_H5_CHECK(H5Gopen2(impl.configurations.get(), configuration.name_.c_str(), H5P_DEFAULT)));
    ConfigurationProgress progress = configuration.progress_;
    progress.complete = 1;
    progress.finished_utc = utc_timestamp_now();
    schema::for_each_attribute_of_progress(progress, AttributeWriter{group.get()});
    MGPU_H5_CHECK(H5Fflush(impl.file.get(), H5F_SCOPE_GLOBAL));
    configuration.progress_ = progress;
  });
}

void ResultsWriter::close() {
  if (impl_ == nullptr) return;
  naming_file(impl_->path, [&] {
    impl_->configurations.close();
    impl_->file.close();
  });
}

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
  return naming_file(path, [&] {
    ResultsFile result;
    result.path = path;
    const H5File file = open_for_reading(path, result.root);
    const Where root_where{path, "/"};
    if (MGPU_H5_CHECK(H5Lexists(file.get(), schema::kConfigurationsGroup, H5P_DEFAULT)) <= 0)
      root_where.fail(std::string("missing group '") + schema::kConfigurationsGroup + "'");
    const H5Group configurations(MGPU_H5_CHECK(H5Gopen2(file.get(), schema::kConfigurationsGroup, H5P_DEFAULT)));
    for (const std::string& name : configuration_names(configurations.get()))
      result.configurations.push_back(
          read_configuration(path, configurations.get(), name, result.root.schema_version));
    return result;
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
      throw UsageError("output file '" + path + "' has schema_version " + std::to_string(root.schema_version) +
                       "; /" + group + " can only be added to a file of schema_version " +
                       std::to_string(schema::kVersion) + " (or a new file)");
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
      write_whole_dataset(group, spec, array);
    });
  });
}

AllreduceSweep read_allreduce_sweep(const std::string& path) {
  AllreduceSweep sweep;
  read_standalone_group(path, schema::kAllreduceGroup, [&](const Where& where, const AttributeReader& read,
                                                            hid_t group) {
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
      read_whole_dataset(where, group, spec, array);
    });
  });
  return probe;
}

}  // namespace mgpu
