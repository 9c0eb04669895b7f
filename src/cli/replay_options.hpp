// Purpose: the command line of `mgpu_bench replay FILE.h5` (study/console_replay.hpp): one results file, or --help;
// every rejection one line naming what was given.
#pragma once

#include <string>

namespace mgpu {

struct ReplayOptions {
  std::string path;
  bool show_help = false;
};

// argv[0] is "replay".
ReplayOptions parse_replay_options(int argc, const char* const* argv);
std::string replay_help_text();

}  // namespace mgpu
