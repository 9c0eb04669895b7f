// Purpose: the HDF5 plumbing the results writer and reader share (internal to src/results): element types, attribute
// writing and reading driven by the schema's visitor lists, error context naming the file and object, root metadata.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "platform/error.hpp"
#include "platform/hdf5_check.hpp"
#include "results/attribute_roles.hpp"
#include "results/hdf5_handles.hpp"
#include "results/results_schema.hpp"

namespace mgpu::hdf5_io {

namespace schema = results_schema;
using schema::AllreduceSweep;
using schema::DatasetSpec;
using schema::Extent;
using schema::ResultArray;
using schema::RootMetadata;

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
H5Datatype utf8_string_type();
// Scalar for no dimensions; a zero-length dimension (an empty nccl_environment) is valid and reads as an empty array.
H5Dataspace make_dataspace(const std::vector<hsize_t>& dims, const std::vector<hsize_t>* max_dims = nullptr);
std::vector<hsize_t> to_hsize(const std::vector<std::size_t>& shape);
std::size_t element_count(const std::vector<std::size_t>& shape);
std::string shape_text(const std::vector<hsize_t>& dims);

// ---- Writing attributes. Creates the attribute, or rewrites it in place when it exists (progress updates keep
// their type and shape).
void write_attribute_data(hid_t object, const char* name, hid_t file_type, hid_t memory_type,
                          const std::vector<hsize_t>& dims, const void* data);
template <typename T>
void write_attribute(hid_t object, const char* name, const T& value) {
  static_assert(std::is_arithmetic_v<T>, "numbers, strings and vectors of them");
  write_attribute_data(object, name, H5Type<T>::file(), H5Type<T>::memory(), {}, &value);
}
template <typename T>
void write_attribute(hid_t object, const char* name, const std::vector<T>& values) {
  write_attribute_data(object, name, H5Type<T>::file(), H5Type<T>::memory(), {values.size()}, values.data());
}
void write_attribute(hid_t object, const char* name, const std::string& value);
void write_attribute(hid_t object, const char* name, const std::vector<std::string>& values);

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
                                                std::initializer_list<H5T_class_t> classes);

template <typename T>
std::vector<T> read_numbers(const Where& where, hid_t object, const char* name, bool scalar) {
  auto [attribute, count] = open_attribute(where, object, name, scalar, {H5T_INTEGER, H5T_FLOAT});
  std::vector<T> values(static_cast<std::size_t>(count));
  if (count > 0) MGPU_H5_CHECK(H5Aread(attribute.get(), H5Type<T>::memory(), values.data()));
  return values;
}

// Variable-length strings (ours) and fixed-length ones (another tool's), in whatever character set the file says.
std::vector<std::string> read_strings(const Where& where, hid_t object, const char* name, bool scalar);

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
std::map<std::string, std::string> all_attributes_as_text(const Where& where, hid_t object);

// ---- Datasets

template <typename Spec>  // DatasetSpec or schema::FixedDatasetSpec
void describe_dataset(hid_t dataset, const Spec& spec) {
  write_attribute(dataset, schema::kUnitsAttribute, spec.units);
  write_attribute(dataset, schema::kDescriptionAttribute, spec.description);
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

std::string configuration_path(const std::string& name);

// The root attributes, version first (a newer file may lack or retype anything else); UsageError naming the file
// for a file that is not ours, newer than this build, or invalid.
RootMetadata read_root_metadata(const std::string& path, hid_t file);
// Opens an existing file read-only and reads its root attributes into `root` (read_root_metadata); UsageError naming
// the file for one that is not HDF5 or not ours.
H5File open_for_reading(const std::string& path, RootMetadata& root);
// The sweep's arrays agree with its attributes (runs, ranks, sizes); UsageError naming the file otherwise.
void check_standalone_sizes(const std::string& path, const AllreduceSweep& s);

}  // namespace mgpu::hdf5_io
