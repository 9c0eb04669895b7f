// Purpose: the fused optimizer's launch and its split, timed once per model shape (fused_update.hpp).
#include "train/fused_update.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/weight_gradient_adam_split.cuh"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "train/gemm/candidate_ranking.hpp"
#include "train/gemm/tuned_gemm.hpp"
#include "train/gpu_clocks.hpp"

namespace mgpu {
namespace {

// What a split is chosen for: the device, the batch and every layer's shape.
using SplitKey = std::tuple<int, int, std::vector<std::tuple<int, int, bool>>>;

struct SplitChoices {
  std::mutex mutex;
  std::map<SplitKey, int> splits;
};

SplitChoices& process_split_choices() {
  static SplitChoices choices;
  return choices;
}

SplitKey split_key(const FusedUpdate& update) {
  int device = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  std::vector<std::tuple<int, int, bool>> shapes;
  for (const kernels::WeightGradientAdamLayer& layer : *update.layers)
    shapes.emplace_back(layer.fan_in, layer.fan_out, layer.has_bias);
  return {device, update.batch, std::move(shapes)};
}

// Milliseconds per update with `splits`, the lowest of kFusedUpdateTimingRounds replays of a graph of
// kFusedUpdateTimedCalls updates (after one untimed call and replay: kernels loaded, caches warm), on `scratch`'s
// state.
double time_split(const FusedUpdate& scratch, int splits, cudaStream_t stream) {
  const auto update = [&] {
    launch_fused_update(scratch, 0, scratch.layers->size(), splits, false, kernels::WeightGradientAdamGrid::resident,
                        stream);
  };
  update();  // eagerly first: the kernel loaded and its attributes set outside the capture
  CudaGraph graph;
  graph.capture(stream, [&] {
    for (int call = 0; call < kFusedUpdateTimedCalls; ++call) update();
  });
  graph.launch(stream);
  const CudaEvent start, stop;
  double lowest = std::numeric_limits<double>::infinity();
  for (int round = 0; round < kFusedUpdateTimingRounds; ++round) {
    start.record(stream);
    graph.launch(stream);
    stop.record(stream);
    stop.synchronize();
    lowest = std::min(lowest, elapsed_ms(start, stop) / kFusedUpdateTimedCalls);
  }
  return lowest;
}

// The timed choice among `options` (fewest parts first) for `update`, on copies of its state.
int time_split_options(const FusedUpdate& update, const std::vector<int>& options, cudaStream_t stream) {
  DeviceBuffer<float> parameters(update.parameter_count), first_moment(update.parameter_count),
      second_moment(update.parameter_count);
  const std::size_t bytes = sizeof(float) * update.parameter_count;
  MGPU_CUDA_CHECK(cudaMemcpyAsync(parameters.data(), update.parameters, bytes, cudaMemcpyDeviceToDevice, stream));
  MGPU_CUDA_CHECK(cudaMemcpyAsync(first_moment.data(), update.first_moment, bytes, cudaMemcpyDeviceToDevice, stream));
  MGPU_CUDA_CHECK(cudaMemcpyAsync(second_moment.data(), update.second_moment, bytes, cudaMemcpyDeviceToDevice, stream));
  FusedUpdate scratch = update;
  scratch.parameters = parameters.data();
  scratch.first_moment = first_moment.data();
  scratch.second_moment = second_moment.data();
  settle_gpu_clocks(stream);  // an idle GPU's rising clock would favour whichever option runs last
  std::vector<double> ms;
  for (int splits : options) ms.push_back(time_split(scratch, splits, stream));
  const std::size_t chosen = rank_candidates(ms, kFusedUpdateTiesWithin, kFusedUpdateTiesWithin, 1).front();
  if (gemm_report_enabled()) {
    std::string times;
    for (std::size_t i = 0; i < options.size(); ++i) {
      char text[64];
      std::snprintf(text, sizeof text, "%s%d parts %.2f us", i == 0 ? "" : ", ", options[i], 1e3 * ms[i]);
      times += text;
    }
    std::fprintf(stderr, "fused optimizer, batch %d: %d parts chosen (%s)\n", update.batch, options[chosen],
                 times.c_str());
  }
  return options[chosen];
}

}  // namespace

std::vector<int> fused_update_split_options(const std::vector<kernels::WeightGradientAdamLayer>& layers, int batch) {
  std::vector<int> options = {1};
  for (int splits : kernels::weight_gradient_adam_split_counts(layers.data(), layers.size(), batch))
    options.push_back(splits);
  return options;
}

void launch_fused_update(const FusedUpdate& update, std::size_t first, std::size_t last, int splits, bool accumulated,
                         kernels::WeightGradientAdamGrid grid, cudaStream_t stream) {
  if (first >= last) return;
  const kernels::WeightGradientAdamLayer* layers = update.layers->data() + first;
  if (splits == 1) {
    kernels::weight_gradient_adam(layers, last - first, update.batch, update.parameters, update.gradients,
                                  update.first_moment, update.second_moment, update.adam, update.params, accumulated,
                                  grid, stream);
  } else {
    kernels::weight_gradient_adam_split(layers, last - first, update.batch, splits, update.parameters, update.gradients,
                                        update.first_moment, update.second_moment, update.adam, update.params,
                                        accumulated, stream);
  }
}

int tuned_fused_update_splits(const FusedUpdate& update, cudaStream_t stream) {
  const std::vector<int> options = fused_update_split_options(*update.layers, update.batch);
  if (options.size() == 1) return 1;
  const SplitKey key = split_key(update);
  SplitChoices& choices = process_split_choices();
  {
    std::lock_guard<std::mutex> lock(choices.mutex);
    const auto found = choices.splits.find(key);
    if (found != choices.splits.end()) return found->second;
  }
  // Timing synchronises the stream, which a capture forbids: the first update must be eager.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MGPU_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  MGPU_REQUIRE(capture == cudaStreamCaptureStatusNone,
               "the fused optimizer's first update of batch " + std::to_string(update.batch) +
                   " came while capturing a CUDA graph: it is timed first, outside any capture");
  const int splits = time_split_options(update, options, stream);
  std::lock_guard<std::mutex> lock(choices.mutex);
  return choices.splits.emplace(key, splits).first->second;
}

}  // namespace mgpu
