// Purpose: the strict command-line parse both option parsers share (main options and the allreduce/probe
// subcommands); reading each option's value is config/setting_options.hpp's.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "config/setting_options.hpp"
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

}  // namespace option_parsing
}  // namespace mgpu
