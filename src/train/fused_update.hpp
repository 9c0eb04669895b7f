// Purpose: how the fused optimizer runs (CudaMlp::adam_with_weight_gradients): each tile's batch summed by one block
// (weight_gradient_adam.cuh) or split over a cluster of 2, 4 or 8 (weight_gradient_adam_split.cuh), the split chosen
// per model and batch by timing each on a copy of the optimizer state, once per process, as the GEMM tuner chooses
// its algorithms.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/weight_gradient_adam.cuh"

namespace mgpu {

// The optimizer state and constants of one fused update over a model's layer table (CudaMlp's fused_layers_).
struct FusedUpdate {
  const std::vector<kernels::WeightGradientAdamLayer>* layers = nullptr;
  int batch = 0;
  float* parameters = nullptr;
  const float* gradients = nullptr;
  float* first_moment = nullptr;
  float* second_moment = nullptr;
  std::size_t parameter_count = 0;
  kernels::AdamConstants adam;
  const kernels::StepParams* params = nullptr;
};

// The split counts the fused update runs: 1 (one block per tile) and those of kernels::
// weight_gradient_adam_split_counts.
std::vector<int> fused_update_split_options(const std::vector<kernels::WeightGradientAdamLayer>& layers, int batch);

// Layers [first, last) of the update with each tile's batch in `splits` parts (1: weight_gradient_adam on `grid`;
// 2, 4 or 8: weight_gradient_adam_split, whose grid is always one block per tile part), on `stream`. Every split count
// gives every tile the same sums whichever layers a launch holds: updating the layers in several launches gives the
// bits of one.
void launch_fused_update(const FusedUpdate& update, std::size_t first, std::size_t last, int splits, bool accumulated,
                         kernels::WeightGradientAdamGrid grid, cudaStream_t stream);

// The split the update of every layer runs fastest with, timed alone: each option's update of the whole model,
// captured kFusedUpdateTimedCalls times in a CUDA graph and replayed on copies of the parameters and moments (the
// model's own are only read), the lowest of kFusedUpdateTimingRounds replays; ties within kFusedUpdateTiesWithin go to
// fewer parts, so that processes whose timings differ by noise choose alike. Shared by every model of the process with
// the same device, widths and batch (so they compute the same bits); the first asks. Synchronises `stream`: never while
// it is captured (Error). 1 where no split is offered.
constexpr int kFusedUpdateTimedCalls = 10;
constexpr int kFusedUpdateTimingRounds = 3;
constexpr double kFusedUpdateTiesWithin = 1.03;
int tuned_fused_update_splits(const FusedUpdate& update, cudaStream_t stream);

}  // namespace mgpu
