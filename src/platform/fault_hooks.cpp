// Purpose: reading the fault-injection hooks (fault_hooks.hpp).
#include "platform/fault_hooks.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace mgpu {

const char* fault_hook(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

long fault_hook_number(const char* variable) {
  const char* value = fault_hook(variable);
  if (value == nullptr || *value < '0' || *value > '9') return -1;
  char* end = nullptr;
  const long number = std::strtol(value, &end, 10);
  return *end == '\0' ? number : -1;
}

void stop_here_if_asked(const char* variable, int rank) {
  static std::map<std::string, long> passes;
  stop_here_if_asked(variable, rank, passes[variable]++);
}

void stop_here_if_asked(const char* variable, int rank, long occasion) {
  const char* wanted = fault_hook(variable);
  int stopped_rank = -1;
  long stopped_at = -1;
  if (wanted == nullptr || std::sscanf(wanted, "%d:%ld", &stopped_rank, &stopped_at) != 2) return;
  if (stopped_rank == rank && stopped_at == occasion) std::raise(SIGSTOP);
}

}  // namespace mgpu
