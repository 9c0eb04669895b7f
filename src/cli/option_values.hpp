// Purpose: one option's value, parsed and checked: whole-number lists, the seed, preset names, NCCL's algorithm and
// protocol names, bounded numbers and the timeout. Each refusal is a UsageError of one line naming the option and the
// bad value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu {

// --seed: a non-negative 64-bit integer.
std::uint64_t parse_seed(const std::string& text);
// --model "medium,large": preset names, each once.
std::vector<std::string> parse_model_list(const std::string& text);
// A comma-separated list of whole numbers in [minimum, maximum], without duplicates, for option `option`
// ("--batch 8,16,32").
std::vector<int> parse_int_list(const std::string& option, const std::string& text, long long minimum,
                                long long maximum);
// NCCL's spelling of a validated --nccl-algo / --nccl-proto value list (e.g. "tree" -> "Tree", "^ring" kept).
std::string nccl_algo_env_value(const std::string& option_value);
std::string nccl_proto_env_value(const std::string& option_value);
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
