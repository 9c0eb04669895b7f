// Purpose: the conditions MEASUREMENT.md asks to record with every configuration that are not GPU-specific:
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

}  // namespace mgpu
