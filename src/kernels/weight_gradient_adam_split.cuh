// Purpose: the fused weight-gradient + Adam (weight_gradient_adam.cuh) with each tile's batch sum split over the blocks
// of a thread-block cluster, for models with fewer tiles than the GPU has block slots: one block per tile would sum the
// whole batch alone while most SMs idle (medium has 133 tiles; an H100 or H200 holds 396 of these blocks at once).
// Plain C++ signatures (launchers only), so .cpp files compiled by g++ can call them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "kernels/cuda_kernels.cuh"
#include "kernels/weight_gradient_adam.cuh"

namespace mgpu::kernels {

// The split counts worth timing for these layers at `batch` on the current device, fewest first: 2, 4 and 8 (a
// portable cluster), never more than the batch has chunks of 32 samples; none where the layers' tiles already give
// every SM three blocks (large's 3,364 tiles), where the batch is one chunk, or where the device has no thread-block
// clusters (compute capability below 9.0).
std::vector<int> weight_gradient_adam_split_counts(const WeightGradientAdamLayer* layers, std::size_t layer_count,
                                                   int batch);

// weight_gradient_adam's update (the same arguments, the same results up to rounding) with the batch of every tile cut
// into `splits` parts (2, 4 or 8; another count throws Error) of whole chunks, one block each, the blocks of a tile one
// cluster. Each block sums its part in sample order; then block r of the cluster adds rows r x 32 / splits .. of the
// tile's partial sums over the cluster's blocks in block order (distributed shared memory) and applies Adam to them.
// The same inputs and split count give the same bits; another split count rounds differently. A dependent launch
// that loads the parameters and moments before the kernel ahead of it has finished: that kernel must not write them.
void weight_gradient_adam_split(const WeightGradientAdamLayer* layers, std::size_t layer_count, int batch, int splits,
                                float* parameters, const float* gradients, float* first_moment, float* second_moment,
                                const AdamConstants& adam, const StepParams* params, bool accumulated,
                                cudaStream_t stream);

}  // namespace mgpu::kernels
