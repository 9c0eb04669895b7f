// Purpose: progress_in_place and message_start (console_line.hpp).
#include "platform/console_line.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace mgpu {

bool progress_in_place(std::FILE* out) {
  const char* chosen = std::getenv("MGPU_PROGRESS");
  const std::string mode = chosen != nullptr ? chosen : "";
  if (mode == "line") return true;
  if (mode == "plain") return false;
  return isatty(fileno(out)) != 0;
}

const char* message_start() { return progress_in_place(stderr) ? "\r\033[K" : ""; }

}  // namespace mgpu
