// Purpose: the values of mgpu_bench's options that are no setting of a configuration, parsed and checked: trials, the
// stopping rules and the timeout (the settings' option texts are config/option_text.hpp's). Each refusal is a
// UsageError of one line naming the option and the bad value.
#pragma once

#include <string>

#include "config/option_text.hpp"

namespace mgpu {

// --trials: one whole number from 1 to kMaxTrials (the word auto is read by the caller).
inline constexpr long long kMaxTrials = 1000;
int parse_trial_count(const std::string& text);
// --max-noise: a percentage from 0 (off) to 100; --max-time: seconds from 0 (no limit) to a week.
double parse_max_noise(const std::string& text);
double parse_max_time(const std::string& text);
// --timeout: seconds from 0 to a week.
double parse_timeout_seconds(const std::string& text);
// --timeout as the command line gives it, read before MPI starts (the start-up deadline, startup_deadline.hpp):
// "--timeout S" or "--timeout=S"; -1 when absent or not valid (the full parse then reports it).
double timeout_before_mpi(int argc, const char* const* argv);

}  // namespace mgpu
