// Purpose: the set-up stop hooks (fault_hooks.hpp).
#include "comm/fault_hooks.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace mgpu {

void stop_here_if_asked(const char* variable, int rank) {
  static std::map<std::string, long> passes;
  stop_here_if_asked(variable, rank, passes[variable]++);
}

void stop_here_if_asked(const char* variable, int rank, long occasion) {
  const char* wanted = std::getenv(variable);
  int stopped_rank = -1;
  long stopped_at = -1;
  if (wanted == nullptr || std::sscanf(wanted, "%d:%ld", &stopped_rank, &stopped_at) != 2) return;
  if (stopped_rank == rank && stopped_at == occasion) std::raise(SIGSTOP);
}

}  // namespace mgpu
