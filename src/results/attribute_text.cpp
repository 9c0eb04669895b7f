// Purpose: the text forms of attribute values shared by the writer, the reader and the analyzer.
#include "results/attribute_text.hpp"

#include <cstdio>
#include <ctime>
#include <type_traits>

namespace mgpu {

namespace schema = results_schema;
using results_schema::ConfigurationMetadata;

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

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::map<std::string, std::string> attribute_texts(const ConfigurationMetadata& metadata) {
  std::map<std::string, std::string> texts;
  schema::for_each_attribute_of_configuration(
      metadata, [&](const char* name, const auto& value) { texts.emplace(name, attribute_value_text(value)); });
  return texts;
}

}  // namespace mgpu
