// Purpose: GPU time per operation the probe's way, for the probe and bench/skinny_gemm_bench: a CUDA graph of `count`
// identical operations replayed between two events, so launch gaps are not in the figure.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "platform/cuda_resources.hpp"

namespace mgpu {

// Milliseconds per operation of each of `runs` replays: `enqueue(i)` puts operation i on `stream`; the graph of
// `count` of them is replayed once untimed (warm caches, clocks up), then once per run between two events.
inline std::vector<double> time_graph_replays(cudaStream_t stream, int count, int runs,
                                              const std::function<void(int)>& enqueue) {
  CudaGraph graph;
  graph.capture(stream, [&] {
    for (int i = 0; i < count; ++i) enqueue(i);
  });
  graph.launch(stream);
  CudaEvent start;
  CudaEvent end;
  std::vector<double> per_run;
  for (int run = 0; run < runs; ++run) {
    start.record(stream);
    graph.launch(stream);
    end.record(stream);
    end.synchronize();
    per_run.push_back(elapsed_ms(start, end) / count);
  }
  return per_run;
}

}  // namespace mgpu
