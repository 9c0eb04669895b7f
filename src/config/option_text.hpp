// Purpose: the texts the settings table's options are given in, parsed and checked: whole numbers and lists of them, a
// 64-bit number, preset names, NCCL's algorithm and protocol names. Every program that offers a row's option reads
// it through these (mgpu_bench's command line and study files, the analyzer's predict). Each refusal is a UsageError
// of one line naming the option and the bad value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mgpu {

// A comma-separated list of whole numbers in [minimum, maximum], without duplicates, for option `option`
// ("--batch 8,16,32").
std::vector<int> parse_int_list(const std::string& option, const std::string& text, long long minimum,
                                long long maximum);
// A non-negative 64-bit integer ("--seed 18446744073709551615").
std::uint64_t parse_unsigned64(const std::string& option, const std::string& text);
// --model "medium,large": preset names, each once.
std::vector<std::string> parse_model_list(const std::string& text);
// NCCL's spelling of a validated --nccl-algo / --nccl-proto value list (e.g. "tree" -> "Tree", "^ring" kept).
std::string nccl_algo_env_value(const std::string& option_value);
std::string nccl_proto_env_value(const std::string& option_value);

}  // namespace mgpu
