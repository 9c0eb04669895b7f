// Purpose: the command line that reproduces a configuration: the parser's inverse, from the settings table. The step
// options are the fewest that resolve_step (resolver.hpp) turns into the configuration's settings again; every other
// setting is given by its row's arguments. mgpu_analyze's note on an N-GPU configuration without its 1-GPU baseline
// prints it for that baseline, with --gpus 1.
#pragma once

#include <string>
#include <vector>

#include "config/settings_table.hpp"

namespace mgpu {

// The request that resolve_step, for `configuration.gpus` GPUs on the CUDA back-end (`cuda`) or the CPU fallback,
// turns into the configuration's step settings: each step option at the command line's default where that resolves to
// the recorded setting too (an auto that decides the same), else the recorded value. A recorded value no option gives
// (gemm_tuning plan: --gemm-plan names a file) keeps the default, and its attribute is added to `unreproduced`, as are
// all of them where the configuration's settings are not what any request resolves to.
StepRequest reproducing_request(const Configuration& configuration, bool cuda, std::vector<std::string>& unreproduced);

struct ReproducingCommand {
  // " --model large --batch 32 --gpus 1,2 --timing events --warmup 10 --steps 100 --runs 50": every setting off
  // the command line's default, in the settings table's order, each with a leading space.
  std::string arguments;
  std::vector<std::string> unreproduced;  // the recorded settings no argument of the command gives
};
ReproducingCommand reproducing_command(const Configuration& configuration, const CommandContext& context);

// The 1-GPU configuration that pairs with the N-GPU `scaled`: what resolve_step makes for one GPU of the command line's
// defaults with each setting of the scaling identity (role scaled) asked for as `scaled` has it. The rest are what one
// GPU runs by default (an N-GPU-only setting asked for on one GPU could be refused, and pairs nothing).
Configuration one_gpu_baseline(const Configuration& scaled, bool cuda);

}  // namespace mgpu
