// Purpose: fault injection for the watchdog's tests: a kernel that never ends, so that a rank blocks in a CUDA wait
// exactly as it would behind a wedged GPU. Only launched when MGPU_FAULT_SPIN_KERNEL_RUN is set (cuda_trainer.cpp).
#pragma once

#include <cuda_runtime_api.h>

namespace mgpu::fault_injection {

// One block of one thread that spins until the process ends.
void launch_never_ending_kernel(cudaStream_t stream);

}  // namespace mgpu::fault_injection
