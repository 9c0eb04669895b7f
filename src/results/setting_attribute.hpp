// Purpose: the one place where a configuration's typed settings meet the results file's attribute types: a bool is
// stored as "on"/"off", an enum as its setting_name, a float as a double, a setting that does not apply as "n/a" (or
// 0); and the stored form read back into the setting, refusing a text the setting has no value for
// (SettingTextError).
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "config/setting_values.hpp"
#include "platform/error.hpp"

namespace mgpu::results_schema {

inline constexpr char kNotApplicable[] = "n/a";

// A stored text that no value of its setting has (the reader adds the file and group).
class SettingTextError : public UsageError {
 public:
  using UsageError::UsageError;
};

// The attribute type that stores a setting of type T.
template <typename T>
using StoredSetting =
    std::conditional_t<kNamedSetting<T>, std::string, std::conditional_t<std::is_same_v<T, float>, double, T>>;

// What the file stores for `value`; where the setting does not apply, "n/a" for a text and 0 for a number.
template <typename T>
StoredSetting<T> stored_setting(const T& value, bool applies) {
  if constexpr (kNamedSetting<T>) {
    return applies ? setting_name(value) : kNotApplicable;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return applies ? static_cast<StoredSetting<T>>(value) : StoredSetting<T>{};
  } else {
    return value;  // texts and arrays are stored as they are, and always apply
  }
}

// The value (a bool's or an enum's) whose setting_name is `text`; UsageError naming the attribute and the text
// otherwise.
template <typename Enum>
Enum setting_from_name(const std::string& text, const char* attribute) {
  if (const std::optional<Enum> value = find_setting_value<Enum>(text)) return *value;
  throw SettingTextError(std::string("attribute ") + attribute + ": '" + text + "' is no value of this setting");
}

// Reads the stored form back into the setting. A setting that does not apply, and a text "n/a" (what the PyTorch peer
// writes for a setting it has no counterpart of), leave the setting as it is.
template <typename T>
void restore_setting(T& value, const StoredSetting<T>& stored, bool applies, const char* attribute) {
  if (!applies) return;
  if constexpr (kNamedSetting<T>) {
    if (stored == kNotApplicable) return;
    if constexpr (std::is_same_v<T, bool>) {
      if (stored != "on" && stored != "off")
        throw SettingTextError(std::string("attribute ") + attribute + ": '" + stored + "' is neither on nor off");
    }
    value = setting_from_name<T>(stored, attribute);
  } else {
    value = static_cast<T>(stored);
  }
}

// Calls visit(name, stored form) for one setting of a configuration; for a configuration being read (Field not
// const), the stored form the visitor filled is then read back into the setting.
template <typename Field, typename Visitor>
void visit_setting(const char* name, Field& field, bool applies, Visitor& visit) {
  using Value = std::remove_const_t<Field>;
  StoredSetting<Value> stored = stored_setting<Value>(field, applies);
  visit(name, stored);
  if constexpr (!std::is_const_v<Field>) restore_setting(field, stored, applies, name);
}

}  // namespace mgpu::results_schema
