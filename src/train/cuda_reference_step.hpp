// Purpose: the math check's reference on one GPU (math_check.hpp): the plain step on the whole global batch, with
// nothing of what the benchmark tunes or overlaps: cuBLASLt's default algorithms in the configuration's precision
// (fp32 for tf32x3, whose claim is fp32's accuracy), eager launches, the unfused optimizer, no reduction.
#pragma once

#include <vector>

#include "train/trainer.hpp"

namespace mgpu {

// The parameters of run 0 before and after `steps` plain steps (global samples [s*B, (s+1)*B) at step s,
// settings.global_batch = B, gradient accumulation as settings say) on the current device, from the same
// initialisation and dropout keys as every rank of the configuration. Allocates its own buffers and frees them before
// it returns.
struct CudaReferenceRun {
  std::vector<float> initial;
  std::vector<float> trained;
};
CudaReferenceRun cuda_reference_run(const TrainingSettings& settings, int steps);

}  // namespace mgpu
