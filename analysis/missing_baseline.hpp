// Purpose: what the report says about an N-GPU configuration without a 1-GPU baseline: the mgpu_bench command that
// would measure the baseline beside it, so the first report of a user's own 2-GPU run ends with the way to a speedup
// instead of an error.
#pragma once

#include <string>

#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {

// "mpirun -np 1 mgpu_bench --model large --batch 32 --gpus 1 --warmup 10 --steps 100 --runs 50": the command that
// measures this configuration's 1-GPU baseline (config/reproducing_command.hpp) and nothing else: the model (or
// --layers), the global batch, the device when it was the CPU, the settings of the scaling identity (role scaled) that
// differ from the command line's defaults (the others at what the default request gives one GPU), steps, runs and
// seed. Its file, given beside this one, has no N-GPU side of its own, so its 1-GPU configuration pairs with this one.
// Says so where no option gives one of its settings, or where other code measured it.
std::string baseline_command(const stats::ConfigurationStats& configuration);

// One line for the report: "'FILE' CONFIGURATION (N GPUs) has no 1-GPU baseline; measure one with: COMMAND".
std::string missing_baseline_note(const stats::ConfigurationStats& configuration);

}  // namespace mgpu::analysis
