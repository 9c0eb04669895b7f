// Purpose: identity of configurations, compared attribute by attribute through the schema's visitor; which attributes
// count is each one's role (results_schema.hpp, configuration_attribute_roles).
#include "results/configuration_identity.hpp"

#include <cstdio>
#include <type_traits>
#include <utility>
#include <vector>

#include "results/attribute_roles.hpp"

namespace mgpu {
namespace {

std::string text_of(const std::string& value) { return "'" + value + "'"; }
template <typename T>
std::string text_of(const T& value) {
  static_assert(std::is_arithmetic_v<T>, "numbers, strings and vectors of them");
  if constexpr (std::is_floating_point_v<T>) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", static_cast<double>(value));
    return text;
  } else {
    return std::to_string(value);
  }
}
template <typename T>
std::string text_of(const std::vector<T>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + text_of(values[i]);
  return text + "]";
}

// Every identity attribute as (name, text), in schema order.
struct IdentityCollector {
  std::vector<std::pair<std::string, std::string>>* attributes;
  template <typename Value>
  void operator()(const char* name, const Value& value) const {
    if (!is_condition_attribute(name)) attributes->emplace_back(name, text_of(value));
  }
};

std::vector<std::pair<std::string, std::string>> identity_of(const results_schema::ConfigurationMetadata& m) {
  std::vector<std::pair<std::string, std::string>> attributes;
  results_schema::for_each_attribute_of_configuration(m, IdentityCollector{&attributes});
  return attributes;
}

}  // namespace

bool is_condition_attribute(const std::string& name) {
  return results_schema::configuration_attribute_role(name) == results_schema::AttributeRole::condition;
}

std::string identity_difference(const results_schema::ConfigurationMetadata& planned,
                                const results_schema::ConfigurationMetadata& stored) {
  const auto mine = identity_of(planned);
  const auto theirs = identity_of(stored);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    if (mine[i].second != theirs[i].second)
      return mine[i].first + " is " + theirs[i].second + " in the file, " + mine[i].second + " in this command";
  }
  return "";
}

}  // namespace mgpu
