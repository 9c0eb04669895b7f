// Purpose: how backward's gradients are cut into all-reduce buckets for overlap: pieces of weight-gradient rows in
// the order backward writes them, grouped into contiguous buckets of the flat gradient buffer.
#pragma once

#include <cstddef>
#include <vector>

#include "config/step_settings.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// Rows [row_begin, row_end) of layer `layer`'s weight gradient, computed by one GEMM. Its elements [begin, end) of
// the flat buffer include the layer's bias gradient when row_end is the last row (the bias follows the weight, and
// backward writes it before the layer's weight gradient).
struct GradientPiece {
  int layer = 0;
  int row_begin = 0;
  int row_end = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
};

// Elements [begin, end) of the flat gradient buffer, reduced by one call once piece `last_piece` is written.
struct GradientBucket {
  std::size_t begin = 0;
  std::size_t end = 0;
  int last_piece = 0;
};

struct BucketPlan {
  // Backward order. layerwise: last layer first, each layer's rows from the last block; deferred: first layer first,
  // each layer's rows from the first block.
  std::vector<GradientPiece> pieces;
  std::vector<GradientBucket> buckets;  // reduction order; together they cover the buffer exactly once
  WeightGradientOrder order = WeightGradientOrder::layerwise;
};

// One piece per layer and one bucket of everything: the plan without overlap.
BucketPlan whole_buffer_plan(const MlpSpec& model);

// Pieces of at most bucket_bytes (a layer's weight rows split evenly where the layer is larger), grouped greedily
// into buckets that stay within bucket_bytes, except that the first bucket closes at first_bucket_bytes so that
// communication starts early. A single piece larger than its cap (one row wider than a bucket) is a bucket alone.
BucketPlan overlap_plan(const MlpSpec& model, std::size_t bucket_bytes, std::size_t first_bucket_bytes);

// The deferred order's plan: the same pieces (at most bucket_bytes), first layer first, grouped greedily from the end
// so that the last bucket, the one whose reduction nothing can hide, closes at last_bucket_bytes.
BucketPlan deferred_overlap_plan(const MlpSpec& model, std::size_t bucket_bytes, std::size_t last_bucket_bytes);

// The plan a configuration's step reduces with on `world_size` ranks: one bucket of everything with one rank or
// without overlap; otherwise buckets of at most --bucket-mb in the overlap order, the one reduced first (layerwise) or
// last (deferred) at most 1 MB.
BucketPlan bucket_plan_for(const TrainingSettings& settings, int world_size);

}  // namespace mgpu
