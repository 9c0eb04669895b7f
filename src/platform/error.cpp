// Purpose: formatting and origin tracking for mgpu::Error messages.
#include "platform/error.hpp"

#include <cstdio>
#include <cstring>

#include "platform/console_line.hpp"

namespace mgpu {
namespace {
std::string& origin_storage() {
  static std::string origin = "mgpu_bench";
  return origin;
}

std::string format_call_error(const char* library, const char* file, int line, const char* call,
                              const std::string& message) {
  return error_origin() + ": " + repository_path(file) + ":" + std::to_string(line) + ": " + call + ": " + library +
         ": " + message;
}
}  // namespace

void set_error_origin(int rank, const std::string& host) {
  origin_storage() = "rank " + std::to_string(rank) + "@" + host;
}

std::string error_origin() { return origin_storage(); }

const char* repository_path(const char* file) {
  // The last "/src/" or "/tests/" marks the repository root; fall back to the whole path.
  const char* best = nullptr;
  for (const char* marker : {"/src/", "/tests/", "/bench/", "/analysis/"}) {
    for (const char* p = std::strstr(file, marker); p != nullptr; p = std::strstr(p + 1, marker)) {
      if (best == nullptr || p > best) best = p;
    }
  }
  return best != nullptr ? best + 1 : file;
}

void throw_call_error(const char* library, const char* file, int line, const char* call, const std::string& message) {
  throw Error(format_call_error(library, file, line, call, message));
}

void warn_call_error(const char* library, const char* file, int line, const char* call, const std::string& message) {
  std::fprintf(stderr, "%swarning: %s\n", message_start(),
               format_call_error(library, file, line, call, message).c_str());
}

}  // namespace mgpu
