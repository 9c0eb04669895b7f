// Purpose: the names of a setting's values, one list per value type next to the type's definition (named_values):
// what the command line parses and lists in --help, what the results file stores and the banner and labels print
// (setting_name), and what reads them back (find_setting_value); a bool is named on / off. And setting_text, the one
// text form of any setting's value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "platform/number_text.hpp"

namespace mgpu {

template <typename Value>
struct NamedValue {
  Value value;
  const char* name;
  const char* help = "";  // what the value does, for --help ("" where the option's own help says it)
  // false for a value that is recorded but given by another option (GemmTuning::plan: --gemm-plan): --help does not
  // list it and the option refuses its name.
  bool on_command_line = true;
};

// A bool setting: "on" or "off" (the results file's and the command line's word for it).
inline constexpr NamedValue<bool> kOnOff[] = {{true, "on"}, {false, "off"}};
constexpr const auto& named_values(bool) { return kOnOff; }

// The name of `value` (every enum of a setting defines named_values(Enum) next to itself, found by argument-dependent
// lookup).
template <typename Value>
const char* setting_name(Value value) {
  for (const NamedValue<Value>& named : named_values(Value{}))
    if (named.value == value) return named.name;
  return "?";
}

// The value named `name`, if any; `command_line`: only the values the command line offers.
template <typename Value>
std::optional<Value> find_setting_value(std::string_view name, bool command_line = false) {
  for (const NamedValue<Value>& named : named_values(Value{}))
    if (name == named.name && (named.on_command_line || !command_line)) return named.value;
  return std::nullopt;
}

// The names the command line offers, in order: "auto", "on", "off".
template <typename Value>
std::vector<const char*> command_line_names() {
  std::vector<const char*> names;
  for (const NamedValue<Value>& named : named_values(Value{}))
    if (named.on_command_line) names.push_back(named.name);
  return names;
}

// "auto | on | off": the names the command line offers, as --help lists them.
template <typename Value>
std::string command_line_value_list() {
  std::string list;
  for (const char* name : command_line_names<Value>()) list += (list.empty() ? "" : " | ") + std::string(name);
  return list;
}

// "a, b or c": a list of names as a message gives them.
inline std::string choice_list(const std::vector<const char*>& names) {
  std::string choices;
  for (std::size_t i = 0; i < names.size(); ++i)
    choices += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
  return choices;
}

// A type whose values have names (a bool or an enum with named_values).
template <typename Value>
inline constexpr bool kNamedSetting = std::is_same_v<Value, bool> || std::is_enum_v<Value>;

// The text of a setting's value as the results file's attribute texts and the command line write it: a name for a bool
// or an enum, the shortest round-trip text for a float or a double, digits for an integer, a list joined by ",".
template <typename Value>
std::string setting_text(const Value& value) {
  if constexpr (kNamedSetting<Value>) {
    return setting_name(value);
  } else if constexpr (std::is_same_v<Value, float>) {
    return shortest_float_text(value);
  } else if constexpr (std::is_floating_point_v<Value>) {
    return shortest_double_text(value);
  } else if constexpr (std::is_integral_v<Value>) {
    return std::to_string(value);
  } else if constexpr (std::is_same_v<Value, std::string>) {
    return value;
  } else {
    std::string joined;
    for (std::size_t i = 0; i < value.size(); ++i) joined += (i > 0 ? "," : "") + setting_text(value[i]);
    return joined;
  }
}

}  // namespace mgpu
