// Purpose: settling the GPU's clocks before the GEMM tuner times candidates. An idle GPU runs at a low clock and
// needs a while under load to reach its working one; candidates timed meanwhile look slower the earlier they run, by
// more than candidates differ, so each process would choose its own plan.
#pragma once

#include <cuda_runtime_api.h>

namespace mgpu {

struct ClockSettling {
  int launches = 0;      // of the fixed work (probe_kernels.cuh)
  double seconds = 0;    // spent
  double first_ms = 0;   // the first launch's time
  double last_ms = 0;    // the last one's
  bool settled = false;  // false: the time limit ended it first
};

// Runs the same fixed arithmetic on every SM of the current device, again and again on `stream` (each launch timed by
// two events), until the last kSettledWindow launches lie within 2% of each other, or after kMostSeconds.
constexpr int kSettledWindow = 20;
constexpr double kMostSeconds = 3.0;
ClockSettling settle_gpu_clocks(cudaStream_t stream);

}  // namespace mgpu
