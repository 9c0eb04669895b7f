// Purpose: the conditions docs/measurement.md asks to record with every configuration that are not GPU-specific:
// the NCCL_* environment in effect, and setting it before NCCL reads it.
#pragma once

#include <string>
#include <vector>

namespace mgpu {

// Every NCCL_* variable in this process's environment, "NAME=value", sorted.
std::vector<std::string> nccl_environment();
// The environment preset the launcher applied (launch/presets/NAME.env exports MGPU_ENVIRONMENT_PRESET=NAME), or
// "none". Recorded with every configuration next to the NCCL_* variables the preset set.
std::string environment_preset();
// Sets NAME=value for NCCL before the communicator exists (the only time NCCL reads it). Returns what it replaced
// ("" if unset), so the caller can say that a command-line option overrode the environment.
std::string set_nccl_variable(const std::string& name, const std::string& value);
// Applies a --nccl-algo / --nccl-proto value (NCCL's spelling; "" or "default" = leave NCCL's choice) before the
// communicator exists; rank 0 says so when it overrides a different value from the environment.
void apply_nccl_option(int rank, const char* variable, const std::string& value);
// Applies --nccl-algo and --nccl-proto (both drivers); on the CPU fallback rank 0 first notes that they have no
// effect there.
void apply_nccl_options(int rank, bool cpu_fallback, const std::string& algo, const std::string& proto);
// The value of NCCL_ALGO / NCCL_PROTO as recorded in the results: the variable, or "default" when unset or empty.
std::string nccl_variable_or_default(const char* name);

}  // namespace mgpu
