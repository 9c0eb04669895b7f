// Purpose: a settings-table row's command-line option as Boost.Program_options declares and reads it, for every parser
// that offers one: mgpu_bench's command line and study files (cli/options.cpp) and the analyzer's predict. Its name,
// help, values and default are the row's (settings_table.hpp); a value is refused with one line naming the option.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "config/option_text.hpp"
#include "config/settings_table.hpp"
#include "platform/error.hpp"

namespace mgpu {

// The integer option `name`, refused unless it lies in [minimum, maximum].
inline int checked_int(const boost::program_options::variables_map& vm, const char* name, long long minimum,
                       long long maximum) {
  const long long value = vm[name].as<long long>();
  if (value < minimum || value > maximum) {
    throw UsageError("--" + std::string(name) + " " + std::to_string(value) + ": must be from " +
                     std::to_string(minimum) + " to " + std::to_string(maximum));
  }
  return static_cast<int>(value);
}

// A number option's value, refused unless it lies within `bounds` (NaN too).
inline double checked_number(const std::string& option, double value, const OptionBounds& bounds) {
  if (!(value >= bounds.minimum && value <= bounds.maximum)) {
    throw UsageError("--" + option + " " + shortest_double_text(value) + ": must be from " +
                     shortest_double_text(bounds.minimum) + " to " + shortest_double_text(bounds.maximum) +
                     bounds.unit);
  }
  return value;
}

// "--OPTION 'TEXT': choose a, b or c" (the names in order).
inline UsageError bad_choice(const std::string& option, const std::string& text,
                             const std::vector<const char*>& names) {
  return UsageError("--" + option + " '" + text + "': choose " + choice_list(names));
}

// The value of a named type (config/setting_values.hpp) the command line offers as `text`; otherwise throws
// bad_choice's UsageError listing the names it offers.
template <typename Value>
Value parse_named(const std::string& option, const std::string& text) {
  if (const std::optional<Value> value = find_setting_value<Value>(text, true)) return *value;
  throw bad_choice(option, text, command_line_names<Value>());
}

// --help's text of an option of a named type: its help, with the values' names (and what each does, where its value
// list says): "auto | on | off: help", or "help; a: what a does | b: what b does".
template <typename Value>
std::string named_option_help(const char* help) {
  if (*named_values(Value{})[0].help == '\0') return command_line_value_list<Value>() + ": " + help;
  std::string described;
  for (const NamedValue<Value>& value : named_values(Value{}))
    if (value.on_command_line)
      described += (described.empty() ? "" : " | ") + std::string(value.name) + ": " + value.help;
  return std::string(help) + "; " + described;
}

// --help's text of row `row`'s option: its help and, for a named type, its values; for a recorded setting, the values
// it offers (the presets).
template <typename Row>
std::string option_help(const Row& row) {
  if constexpr (kIsStepOption<Row>) {
    using Request = std::decay_t<decltype(StepRequest{}.*row.request)>;
    if constexpr (kNamedSetting<Request>) return named_option_help<Request>(row.help);
    return row.help;
  } else {
    return row.offered != nullptr ? std::string(row.help) + ": " + row.offered() : std::string(row.help);
  }
}

// Declares row `row`'s option in `description`: a step option with the command line's default (StepRequest's), a
// recorded setting with its member's (Configuration's), a grid list or a text without one. `help` replaces the row's
// where a program means something of its own by it (predict's --gpus).
template <typename Row>
void describe_option(boost::program_options::options_description& description, const Row& row,
                     const std::string& help = "") {
  namespace po = boost::program_options;
  const std::string text = help.empty() ? option_help(row) : help;
  const auto add = [&](const po::value_semantic* value) { description.add_options()(row.option, value, text.c_str()); };
  if constexpr (kIsStepOption<Row>) {
    const StepRequest defaults;
    const auto& given = defaults.*row.request;
    using Request = std::decay_t<decltype(given)>;
    if constexpr (std::is_floating_point_v<Request>)
      add(po::value<double>()->default_value(given));
    else if constexpr (std::is_integral_v<Request>)
      add(po::value<long long>()->default_value(given));
    else
      add(po::value<std::string>()->default_value(setting_name(given)));
  } else {
    const Configuration defaults;
    const auto& given = setting_of(row, defaults);
    using Setting = std::decay_t<decltype(given)>;
    if (row.in_grid) {  // a list, or the dropout every preset of the grid takes
      add(std::is_floating_point_v<Setting> ? static_cast<const po::value_semantic*>(po::value<double>())
                                            : po::value<std::string>());
    } else if constexpr (std::is_floating_point_v<Setting>) {
      add(po::value<double>()->default_value(given));
    } else if constexpr (std::is_integral_v<Setting> && sizeof(Setting) < sizeof(std::uint64_t)) {
      add(po::value<long long>()->default_value(given));
    } else if constexpr (std::is_integral_v<Setting>) {  // a 64-bit number, read whole from its text
      add(po::value<std::string>()->default_value(setting_text(given)));
    } else {  // a text, a list of the grid's
      add(po::value<std::string>());
    }
  }
}

// Declares the option of every row of `table` that has one, in the table's order.
template <typename Table = SettingsTable>
void describe_setting_options(boost::program_options::options_description& description,
                              const Table& table = kSettingsTable) {
  for_each_row_of(table, [&](const auto& row) {
    if (row.option != nullptr) describe_option(description, row);
  });
}

// The value of step option `row` in `vm`: a named value the command line offers, or a number within the row's bounds.
template <typename Row>
auto parse_step_option(const Row& row, const boost::program_options::variables_map& vm) {
  using Request = std::decay_t<decltype(StepRequest{}.*row.request)>;
  const std::string option = row.option;
  if constexpr (kNamedSetting<Request>) {
    return parse_named<Request>(option, vm[option].as<std::string>());
  } else if constexpr (std::is_integral_v<Request>) {
    return static_cast<Request>(checked_int(vm, row.option, static_cast<long long>(row.bounds.minimum),
                                            static_cast<long long>(row.bounds.maximum)));
  } else {
    return static_cast<Request>(checked_number(option, vm[option].as<double>(), row.bounds));
  }
}

// Sets recorded setting `row` of `configuration` from `vm` where its option is there (given, or at its default): a
// whole number within the row's bounds, a 64-bit number, a number within its bounds, or a text as the row reads it.
// The grid's rows are the grid's to read (cli/options.cpp).
template <typename Row>
void parse_recorded_option(const Row& row, const boost::program_options::variables_map& vm,
                           Configuration& configuration) {
  if (row.option == nullptr || row.in_grid || vm.count(row.option) == 0) return;
  auto& setting = setting_of(row, configuration);
  using Setting = std::decay_t<decltype(setting)>;
  const std::string option = row.option;
  if constexpr (std::is_same_v<Setting, std::string>) {
    const std::string& text = vm[option].as<std::string>();
    setting = row.parse_text != nullptr ? row.parse_text(text) : text;
  } else if constexpr (std::is_integral_v<Setting> && sizeof(Setting) < sizeof(std::uint64_t)) {
    setting = static_cast<Setting>(checked_int(vm, row.option, static_cast<long long>(row.bounds.minimum),
                                               static_cast<long long>(row.bounds.maximum)));
  } else if constexpr (std::is_integral_v<Setting>) {
    setting = parse_unsigned64("--" + option, vm[option].as<std::string>());
  } else if constexpr (std::is_floating_point_v<Setting>) {
    setting = static_cast<Setting>(checked_number(option, vm[option].as<double>(), row.bounds));
  }
}

// A comma-separated list of whole numbers for grid row `row` (--batch, --gpus), each within its bounds.
template <typename Row>
std::vector<int> parse_grid_list(const Row& row, const std::string& text) {
  return parse_int_list("--" + std::string(row.option), text, static_cast<long long>(row.bounds.minimum),
                        static_cast<long long>(row.bounds.maximum));
}

// The row whose option is `option`; visit(row) for it (nothing where no row has it).
template <typename Visit, typename Table = SettingsTable>
void with_option_row(const char* option, Visit&& visit, const Table& table = kSettingsTable) {
  for_each_row_of(table, [&](const auto& row) {
    if (row.option != nullptr && std::string(row.option) == option) visit(row);
  });
}

// The whole numbers grid option `option` (--batch, --gpus) gives in `text`, each within its row's bounds.
inline std::vector<int> parse_number_list_option(const char* option, const std::string& text) {
  std::vector<int> values;
  with_option_row(option, [&](const auto& row) { values = parse_grid_list(row, text); });
  return values;
}

}  // namespace mgpu
