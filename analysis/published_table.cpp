// Purpose: reading a published table and its rendering against the model (published_table.hpp).
#include "published_table.hpp"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "platform/error.hpp"

namespace mgpu::analysis {
namespace {

// Member `key` of `object` as T; UsageError naming the file and the member when it is absent or of another type.
template <typename T>
T member(const nlohmann::json& object, const std::string& key, const std::string& path) {
  if (!object.is_object() || !object.contains(key))
    throw UsageError("--published '" + path + "': no member '" + key + "'");
  try {
    return object.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw UsageError("--published '" + path + "': member '" + key + "' is not of the expected type");
  }
}

int positive_count(const nlohmann::json& object, const std::string& key, const std::string& path) {
  const int value = member<int>(object, key, path);
  if (value < 1) throw UsageError("--published '" + path + "': " + key + " " + std::to_string(value) + " is below 1");
  return value;
}

}  // namespace

stats::PublishedTable read_published_table(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UsageError("--published '" + path + "': cannot be read");
  nlohmann::json json;
  try {
    file >> json;
  } catch (const nlohmann::json::exception&) {
    throw UsageError("--published '" + path + "': not JSON");
  }
  stats::PublishedTable table;
  table.name = member<std::string>(json, "name", path);
  table.url = member<std::string>(json, "url", path);
  table.hardware = member<std::string>(json, "hardware", path);
  table.software = member<std::string>(json, "software", path);
  table.gpu = member<std::string>(json, "gpu", path);
  table.nvls = member<bool>(json, "nvls", path);
  table.link = member<std::string>(json, "link", path);
  table.shape = {positive_count(json, "nodes", path), positive_count(json, "gpus_per_node", path),
                 positive_count(json, "nics_per_node", path)};
  table.used_to_fit = member<bool>(json, "used_to_fit", path);
  const nlohmann::json rows = member<nlohmann::json>(json, "rows", path);
  if (!rows.is_array() || rows.empty()) throw UsageError("--published '" + path + "': 'rows' is not a list of rows");
  for (const nlohmann::json& row : rows) {
    stats::PublishedTable::Row r;
    r.bytes = member<long long>(row, "bytes", path);
    r.us = member<double>(row, "us", path);
    if (row.contains("note")) r.note = member<std::string>(row, "note", path);
    table.rows.push_back(r);
  }
  return table;
}

Table published_table(const stats::PublishedTable& table, const stats::HeldTable& held) {
  // One key per table: "published_nccl_tests_309".
  std::string key = "published_";
  for (const char c : table.name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      key += char(std::tolower(static_cast<unsigned char>(c)));
    else if (key.back() != '_')
      key += '_';
  Table out{key, "All-reduce: " + table.name + " against the cluster model", {}, {}, {}, true};
  out.columns = {{"bytes", "bytes", 0, true},           {"published_us", "published us", 1},
                 {"predicted_us", "predicted us", 1},   {"error_percent", "error %", 1},
                 text_column("algorithm", "algorithm"), text_column("protocol", "protocol")};
  for (const stats::HeldRow& row : held.rows)
    out.add_row({std::int64_t(row.bytes), row.published_us, row.predicted_us, 100 * row.error,
                 std::string(stats::algorithm_name(row.candidate.algorithm)),
                 std::string(stats::protocol_name(row.candidate.protocol))});
  out.notes.push_back(table.url + ": " + table.hardware + "; " + table.software);
  out.notes.push_back((table.used_to_fit
                           ? "in-sample: the table the model's " + std::to_string(stats::fitted_constants().size()) +
                                 " constants were fitted to"
                           : std::string("held out: not used to fit, the model as fitted elsewhere")) +
                      "; node: " + held.node.source + "; NIC: " + held.nic.source);
  const auto worst = [](double error, int rows, const char* where) {
    char text[120];
    if (rows == 0)
      std::snprintf(text, sizeof text, "no row %s", where);
    else
      std::snprintf(text, sizeof text, "%.1f%% %s (%d row%s)", 100 * error, where, rows, rows == 1 ? "" : "s");
    return std::string(text);
  };
  out.notes.push_back(
      "worst |error|: " + worst(held.worst_abs_error_1_to_128_mib, held.rows_1_to_128_mib, "from 1 to 128 MiB") + ", " +
      worst(held.worst_abs_error_below_1_mib, held.rows_below_1_mib, "below 1 MiB"));
  for (const stats::PublishedTable::Row& row : table.rows)
    if (!row.note.empty()) out.notes.push_back(std::to_string(row.bytes) + " bytes: " + row.note);
  out.notes.push_back("error = (predicted - published) / published");
  return out;
}

Table published_error_table(const std::vector<stats::PublishedTable>& tables) {
  Table out{"allreduce_model_error", "The cluster all-reduce model's error, in-sample and held out", {}, {}, {}, true};
  out.columns = {text_column("table", "table"),
                 text_column("judged", "judged"),
                 {"rows", "rows"},
                 {"constants_fitted", "constants fitted"},
                 {"lowest_error_percent", "lowest error %", 1},
                 {"highest_error_percent", "highest error %", 1},
                 {"worst_abs_error_percent", "worst |error| %", 1}};
  for (const stats::PublishedTable& table : tables) {
    const stats::HeldTable held = stats::hold_against(table);
    out.add_row({table.name, std::string(table.used_to_fit ? "in-sample" : "held out"), std::int64_t(held.rows.size()),
                 table.used_to_fit ? Value(std::int64_t(stats::fitted_constants().size())) : Value(),
                 100 * held.lowest_error, 100 * held.highest_error, 100 * held.worst_abs_error()});
  }
  out.notes.push_back(
      "in-sample: the rows the constants were fitted to (they check the fit, not the model); held out: a table not "
      "used to fit, the model as fitted; error = (predicted - published) / published over every row");
  return out;
}

}  // namespace mgpu::analysis
