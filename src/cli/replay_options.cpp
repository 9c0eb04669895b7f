// Purpose: parse_replay_options and replay_help_text (replay_options.hpp).
#include "cli/replay_options.hpp"

#include "platform/build_info.hpp"
#include "platform/error.hpp"

namespace mgpu {

ReplayOptions parse_replay_options(int argc, const char* const* argv) {
  ReplayOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      options.show_help = true;
      return options;
    }
    if (argument.rfind('-', 0) == 0) throw UsageError("replay: unknown option '" + argument + "'");
    if (!options.path.empty())
      throw UsageError("replay: one results file, not '" + options.path + "' and '" + argument + "'");
    options.path = argument;
  }
  if (options.path.empty()) throw UsageError("replay: no results file given (mgpu_bench replay FILE.h5)");
  return options;
}

std::string replay_help_text() {
  return std::string("mgpu_bench ") + project_version() +
         " replay: the console of the job that wrote a results file, re-made from the file\n"
         "usage: mgpu_bench replay FILE.h5   (one process)\n\n"
         "Prints what the job printed on stdout (its banner, run lines, summaries, sweep table and verdict) from the\n"
         "file alone, with this build's formatting and statistics; the banner names the build that measured. The\n"
         "set-up, unique-id, notice and plan lines come from files of schema version 15 on.\n";
}

}  // namespace mgpu
