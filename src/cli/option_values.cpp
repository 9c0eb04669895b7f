// Purpose: one option's value, parsed and checked (option_values.hpp).
#include "cli/option_values.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "model/mlp_spec.hpp"
#include "platform/error.hpp"

namespace mgpu {

std::uint64_t parse_seed(const std::string& text) {
  const bool all_digits = !text.empty() && text.size() <= 20 &&
                          std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  if (all_digits) {
    try {
      return std::stoull(text);
    } catch (const std::exception&) {
    }
  }
  throw UsageError("--seed '" + text + "': must be a non-negative 64-bit integer");
}

// "medium,large": preset names, each once.
std::vector<std::string> parse_model_list(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    preset_model(item);  // throws naming an unknown preset
    if (std::find(names.begin(), names.end(), item) != names.end())
      throw UsageError("--model '" + text + "': " + item + " is given twice");
    names.push_back(item);
  }
  if (names.empty() || text.back() == ',') throw UsageError("--model '" + text + "': empty list item");
  return names;
}

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Maps a comma-separated list (optionally starting with '^', NCCL's "all but") onto NCCL's spelling, rejecting
// names NCCL does not know. Validated here so a typo fails at once instead of being ignored by NCCL.
std::string nccl_list_value(const std::string& option, const std::string& value,
                            const std::vector<std::string>& known_names) {
  std::string body = value;
  std::string prefix;
  if (!body.empty() && body[0] == '^') {
    prefix = "^";
    body = body.substr(1);
  }
  std::string result;
  std::stringstream stream(body);
  std::string item;
  bool any = false;
  while (std::getline(stream, item, ',')) {
    const auto match = std::find_if(known_names.begin(), known_names.end(),
                                    [&](const std::string& name) { return lower(name) == lower(item); });
    if (match == known_names.end()) {
      std::string choices;
      for (const std::string& name : known_names) choices += (choices.empty() ? "" : ", ") + lower(name);
      throw UsageError("--" + option + " '" + value + "': unknown '" + item + "' (choose from " + choices + ")");
    }
    result += (any ? "," : "") + *match;
    any = true;
  }
  if (!any || body.back() == ',') throw UsageError("--" + option + " '" + value + "': empty list");
  return prefix + result;
}

// A finite number in [0, maximum] that is the whole of `text`, or UsageError naming `option` and `expected`.
double parse_bounded(const std::string& option, const std::string& text, double maximum, const std::string& expected) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value) || value < 0 || value > maximum)
    throw UsageError(option + " '" + text + "': " + expected);
  return value;
}

}  // namespace

std::string nccl_algo_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-algo", option_value,
                         {"Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"});
}

std::string nccl_proto_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-proto", option_value, {"LL", "LL128", "Simple"});
}

std::vector<int> parse_int_list(const std::string& option, const std::string& text, long long minimum,
                                long long maximum) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const bool digits = !item.empty() && item.size() <= 18 &&
                        std::all_of(item.begin() + (item[0] == '-' ? 1 : 0), item.end(),
                                    [](unsigned char c) { return std::isdigit(c); }) &&
                        item != "-";
    if (!digits) throw UsageError(option + " '" + text + "': '" + item + "' is not a whole number");
    const long long value = std::stoll(item);
    if (value < minimum || value > maximum) {
      throw UsageError(option + " " + item + ": must be from " + std::to_string(minimum) + " to " +
                       std::to_string(maximum));
    }
    if (std::find(values.begin(), values.end(), value) != values.end())
      throw UsageError(option + " '" + text + "': " + item + " is given twice");
    values.push_back(static_cast<int>(value));
  }
  if (values.empty() || text.back() == ',') throw UsageError(option + " '" + text + "': empty list item");
  return values;
}

int parse_trial_count(const std::string& text) {
  const std::vector<int> trials = parse_int_list("--trials", text, 1, kMaxTrials);
  if (trials.size() != 1) throw UsageError("--trials '" + text + "': one number of trials, or auto");
  return trials.front();
}

double parse_max_noise(const std::string& text) {
  return parse_bounded("--max-noise", text, 100.0, "give a percentage from 0 (off) to 100");
}

double parse_max_time(const std::string& text) {
  return parse_bounded("--max-time", text, 7 * 24 * 3600.0, "give seconds from 0 (no limit) to 604800");
}

double parse_timeout_seconds(const std::string& text) {
  // A week bounds it: beyond that the value is a typo, not a watchdog.
  return parse_bounded("--timeout", text, 7 * 24 * 3600.0, "give seconds from 0 (no watchdog) to 604800");
}

double timeout_before_mpi(int argc, const char* const* argv) {
  const std::string option = "--timeout";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    std::string value;
    if (word == option && i + 1 < argc)
      value = argv[i + 1];
    else if (word.rfind(option + "=", 0) == 0)
      value = word.substr(option.size() + 1);
    else
      continue;
    try {
      return parse_timeout_seconds(value);
    } catch (const UsageError&) {
      return -1;
    }
  }
  return -1;
}

}  // namespace mgpu
