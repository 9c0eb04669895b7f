// Purpose: the command-line helpers both option parsers share (main options and the allreduce/probe subcommands).
#pragma once

#include <boost/program_options.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/setting_values.hpp"
#include "platform/error.hpp"
#include "platform/exact_options.hpp"

namespace mgpu {
namespace option_parsing {

// Parses argv[1..] (argv[0] is skipped, like a program's name) into `vm` (and `also`, when given), refusing stray
// words. Boost's errors and the stray word become one UsageError starting with `prefix`; `stray_hint` ends the
// stray-word message. `notify` runs po::notify(vm) inside the same error handling.
inline void parse_strict(const boost::program_options::options_description& description, int argc,
                         const char* const* argv, const std::string& prefix, const std::string& stray_hint,
                         boost::program_options::variables_map& vm, bool notify,
                         boost::program_options::variables_map* also = nullptr) {
  namespace po = boost::program_options;
  try {
    // A stray word ("--steps 100 200") is collected and refused below, never silently dropped.
    po::options_description all = description;
    all.add_options()("stray", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray", -1);
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(all).positional(stray).style(kExactOptions).run();
    po::store(parsed, vm);
    if (also != nullptr) po::store(parsed, *also);
    if (notify) po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(prefix + option_error_message(e, description));
  }
  if (vm.count("stray")) {
    throw UsageError(prefix + "unexpected argument '" + vm["stray"].as<std::vector<std::string>>().front() + "' (" +
                     stray_hint + ")");
  }
}

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

// The value whose name is `text`; otherwise throws bad_choice's UsageError.
template <typename Value>
Value parse_choice(const std::string& option, const std::string& text,
                   std::initializer_list<std::pair<const char*, Value>> choices) {
  std::vector<const char*> names;
  for (const auto& choice : choices) {
    if (text == choice.first) return choice.second;
    names.push_back(choice.first);
  }
  throw bad_choice(option, text, names);
}

}  // namespace option_parsing
}  // namespace mgpu
