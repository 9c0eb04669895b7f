// Purpose: how backward's gradients are cut into all-reduce buckets for overlap: pieces of weight-gradient rows in
// the order backward writes them, grouped into contiguous buckets of the flat gradient buffer.
#pragma once

#include <cstddef>
#include <vector>

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

// When backward forms the weight gradients (--overlap-order):
//  - layerwise: each layer's right after its dL/dZ, last layer first (PyTorch DDP's order). The first layer's, the
//    largest by far in both presets, is then backward's last write, and its reduction cannot overlap anything.
//  - deferred: the chain of input gradients first (every layer's dL/dZ), then the weight gradients from the first
//    layer up. The first layer's is reduced behind the weight-gradient GEMMs of the layers above it, the last bucket is
//    small, and since backward reads no weight after the chain, Adam may update a bucket as soon as it is reduced.
enum class WeightGradientOrder { layerwise, deferred };
inline const char* weight_gradient_order_name(WeightGradientOrder order) {
  return order == WeightGradientOrder::deferred ? "deferred" : "layerwise";
}

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

}  // namespace mgpu
