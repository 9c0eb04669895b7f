// Purpose: the values of the options that are no setting, parsed and checked (option_values.hpp).
#include "cli/option_values.hpp"

#include <cmath>
#include <vector>

#include "platform/error.hpp"

namespace mgpu {

namespace {

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
