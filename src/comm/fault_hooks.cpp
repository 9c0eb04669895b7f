// Purpose: the set-up stop hooks (fault_hooks.hpp).
#include "comm/fault_hooks.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace mgpu {

void stop_here_if_asked(const char* variable, int rank) {
  static std::map<std::string, int> passes;
  const int seen = passes[variable]++;
  const char* wanted = std::getenv(variable);
  int stopped_rank = -1;
  int stopped_at = -1;
  if (wanted == nullptr || std::sscanf(wanted, "%d:%d", &stopped_rank, &stopped_at) != 2) return;
  if (stopped_rank == rank && stopped_at == seen) std::raise(SIGSTOP);
}

}  // namespace mgpu
