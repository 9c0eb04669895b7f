// Purpose: the NCCL_* environment snapshot recorded with the results, and setting NCCL variables.
#include "comm/run_conditions.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "config/configuration.hpp"
#include "platform/error.hpp"

extern char** environ;

namespace mgpu {

std::vector<std::string> nccl_environment() {
  std::vector<std::string> variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "NCCL_", 5) == 0) variables.emplace_back(*entry);
  }
  std::sort(variables.begin(), variables.end());
  return variables;
}

std::string environment_preset() {
  const char* name = std::getenv("MGPU_ENVIRONMENT_PRESET");
  return name != nullptr && *name != '\0' ? name : "none";
}

std::string set_nccl_variable(const std::string& name, const std::string& value) {
  const char* previous = std::getenv(name.c_str());
  std::string replaced = previous != nullptr ? previous : "";
  if (setenv(name.c_str(), value.c_str(), 1) != 0) throw Error("setenv(" + name + ") failed");
  return replaced;
}

namespace {

// An option's value that asks for nothing: NCCL's own choice ("" or the recorded word for it).
bool leaves_to_nccl(const std::string& value) { return value.empty() || value == kNcclDefault; }

}  // namespace

void apply_nccl_option(int rank, const char* variable, const std::string& value) {
  if (leaves_to_nccl(value)) return;
  const std::string replaced = set_nccl_variable(variable, value);
  if (rank == 0 && !replaced.empty() && replaced != value) {
    std::printf("# note: the command line sets %s=%s over %s=%s from the environment\n", variable, value.c_str(),
                variable, replaced.c_str());
  }
}

void apply_nccl_options(int rank, bool cpu_fallback, const std::string& algo, const std::string& proto) {
  if (rank == 0 && cpu_fallback && !(leaves_to_nccl(algo) && leaves_to_nccl(proto)))
    std::printf("# note: --nccl-algo/--nccl-proto have no effect on the CPU fallback (MPI_Allreduce)\n");
  apply_nccl_option(rank, "NCCL_ALGO", algo);
  apply_nccl_option(rank, "NCCL_PROTO", proto);
}

std::string nccl_variable_or_default(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : kNcclDefault;
}

}  // namespace mgpu
