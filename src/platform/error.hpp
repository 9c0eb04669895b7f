// Purpose: the project's error types and the one message shape for failed library calls:
//   "rank R@host: file:line: call: library message".
#pragma once

#include <stdexcept>
#include <string>

namespace mgpu {

// A failure of a library call or an internal invariant; carries the full one-line message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input (an option, a file that already exists, ...): reported as one line, exit status 1.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Called once the rank and host are known, so every later message names where it happened.
void set_error_origin(int rank, const std::string& host);
// "rank 0@node7", or "mgpu_bench" before MPI has started.
std::string error_origin();

// Shortens an absolute __FILE__ to the path inside the repository (src/..., tests/...).
const char* repository_path(const char* file);

// Throws Error("rank R@host: file:line: call: library: message").
[[noreturn]] void throw_call_error(const char* library, const char* file, int line, const char* call,
                                   const std::string& message);

// Same message printed to stderr instead of thrown: for destructors, which must not throw.
void warn_call_error(const char* library, const char* file, int line, const char* call, const std::string& message);

}  // namespace mgpu

// Checks an internal invariant that the caller can phrase as a message.
#define MGPU_REQUIRE(condition, message)                                                           \
  do {                                                                                             \
    if (!(condition)) ::mgpu::throw_call_error("mgpu", __FILE__, __LINE__, #condition, (message)); \
  } while (0)
