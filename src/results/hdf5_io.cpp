// Purpose: the non-template HDF5 helpers of hdf5_io.hpp.
#include "results/hdf5_io.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "results/attribute_text.hpp"

namespace mgpu::hdf5_io {

H5Datatype utf8_string_type() {
  H5Datatype type(MGPU_H5_CHECK(H5Tcopy(H5T_C_S1)));
  MGPU_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE));
  MGPU_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8));
  return type;
}

H5Dataspace make_dataspace(const std::vector<hsize_t>& dims, const std::vector<hsize_t>* max_dims) {
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

std::string configuration_path(const std::string& name) {
  return std::string("/") + schema::kConfigurationsGroup + "/" + name;
}

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

H5File open_for_reading(const std::string& path, RootMetadata& root) {
  if (MGPU_H5_CHECK(H5Fis_hdf5(path.c_str())) == 0) throw UsageError("'" + path + "' is not an HDF5 file");
  // An HDF5 signature with a file that does not open behind it: cut short (a full disk, a copy or a write that
  // stopped) or damaged. HDF5's own words would only name its internals.
  silence_hdf5_error_printing();
  const hid_t opened = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (opened < 0) {
    H5Eclear2(H5E_DEFAULT);
    throw UsageError("'" + path + "' is truncated or not an mgpu_bench results file (HDF5 cannot open it)");
  }
  H5File file(opened);
  root = read_root_metadata(path, file.get());
  return file;
}

void check_standalone_sizes(const std::string& path, const AllreduceSweep& s) {
  const std::size_t sizes = s.size_labels.size();
  const auto runs = static_cast<std::size_t>(std::max(s.runs, 0));
  const auto ranks = static_cast<std::size_t>(std::max(s.conditions.ranks, 0));
  const auto expect = [&](const char* name, const std::vector<std::size_t>& shape,
                          const std::vector<std::size_t>& want) {
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

}  // namespace mgpu::hdf5_io
