// Purpose: the math check's reference on one GPU (math_check.hpp): the plain step on the whole global batch, with
// nothing of what the benchmark tunes or overlaps: cuBLASLt's default algorithms in fp32, eager launches, the unfused
// optimizer, no reduction.
#pragma once

#include <vector>

#include "train/trainer.hpp"

namespace mgpu {

// The parameters after `steps` plain steps of run 0 (global samples [s*B, (s+1)*B) at step s, settings.global_batch =
// B, gradient accumulation as settings say) on the current device, from the same initialisation and dropout keys as
// every rank of the configuration. Allocates its own buffers and frees them before it returns.
std::vector<float> cuda_reference_parameters(const TrainingSettings& settings, int steps);

}  // namespace mgpu
