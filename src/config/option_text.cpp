// Purpose: the texts of the settings table's options, parsed and checked (option_text.hpp).
#include "config/option_text.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "model/mlp_spec.hpp"
#include "platform/error.hpp"

namespace mgpu {

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

std::uint64_t parse_unsigned64(const std::string& option, const std::string& text) {
  const bool all_digits = !text.empty() && text.size() <= 20 &&
                          std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  if (all_digits) {
    try {
      return std::stoull(text);
    } catch (const std::exception&) {
    }
  }
  throw UsageError(option + " '" + text + "': must be a non-negative 64-bit integer");
}

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

}  // namespace

std::string nccl_algo_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-algo", option_value,
                         {"Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"});
}

std::string nccl_proto_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-proto", option_value, {"LL", "LL128", "Simple"});
}

}  // namespace mgpu
