// Purpose: settle_gpu_clocks: fixed work, timed launch by launch, until its time stops changing.
#include "train/gpu_clocks.hpp"

#include <algorithm>
#include <chrono>
#include <deque>

#include "kernels/probe_kernels.cuh"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/wall_clock.hpp"

namespace mgpu {

ClockSettling settle_gpu_clocks(cudaStream_t stream) {
  // About 0.2 ms a launch at Hopper's working clocks (4 cycles a dependent FMA): a window of 20 spans a few ms.
  constexpr int kIterations = 100000;
  constexpr double kSteady = 1.02;
  int device = 0;
  int sms = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CudaEvent start;
  CudaEvent stop;
  ClockSettling settling;
  std::deque<double> window;
  const auto began = std::chrono::steady_clock::now();
  while (settling.seconds < kMostSeconds) {
    start.record(stream);
    probe_kernels::fixed_work(sms, kIterations, nullptr, stream);
    stop.record(stream);
    stop.synchronize();
    const double ms = elapsed_ms(start, stop);
    if (settling.launches++ == 0) settling.first_ms = ms;
    settling.last_ms = ms;
    settling.seconds = seconds_since(began);
    window.push_back(ms);
    if (window.size() > static_cast<std::size_t>(kSettledWindow)) window.pop_front();
    const auto [low, high] = std::minmax_element(window.begin(), window.end());
    if (window.size() == static_cast<std::size_t>(kSettledWindow) && *high <= kSteady * *low) {
      settling.settled = true;
      break;
    }
  }
  return settling;
}

}  // namespace mgpu
