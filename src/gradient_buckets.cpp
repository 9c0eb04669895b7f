// Purpose: the bucket plans of gradient_buckets.hpp (pure host code, tested on the CPU).
#include "gradient_buckets.hpp"

#include <algorithm>

#include "error.hpp"

namespace mgpu {
namespace {

constexpr std::size_t kBytesPerElement = sizeof(float);

// Layer `layer`'s weight rows in `blocks` near-equal blocks, the last block first (it sits next to the bias).
void append_layer_pieces(const DenseLayer& layer, int layer_index, int blocks, std::vector<GradientPiece>& pieces) {
  const int rows_per_block = (layer.fan_out + blocks - 1) / blocks;
  for (int row_end = layer.fan_out; row_end > 0; row_end -= rows_per_block) {
    GradientPiece piece;
    piece.layer = layer_index;
    piece.row_end = row_end;
    piece.row_begin = std::max(0, row_end - rows_per_block);
    piece.begin = layer.weight_offset + static_cast<std::size_t>(piece.row_begin) * layer.fan_in;
    // The bias (hidden layers only) follows the weights: the last rows' piece ends after it.
    piece.end = layer.weight_offset + static_cast<std::size_t>(row_end) * layer.fan_in +
                (row_end == layer.fan_out ? layer.bias_count() : 0);
    pieces.push_back(piece);
  }
}

}  // namespace

BucketPlan whole_buffer_plan(const MlpSpec& model) {
  BucketPlan plan;
  const std::vector<DenseLayer> layers = model.layers();
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) append_layer_pieces(layers[l], l, 1, plan.pieces);
  plan.buckets.push_back({0, model.parameter_count(), static_cast<int>(plan.pieces.size()) - 1});
  return plan;
}

BucketPlan overlap_plan(const MlpSpec& model, std::size_t bucket_bytes, std::size_t first_bucket_bytes) {
  MGPU_REQUIRE(bucket_bytes > 0 && first_bucket_bytes > 0, "bucket sizes must be positive");
  BucketPlan plan;
  const std::vector<DenseLayer> layers = model.layers();
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l) {
    const std::size_t bytes = (layers[l].weight_count() + layers[l].bias_count()) * kBytesPerElement;
    const std::size_t wanted = (bytes + bucket_bytes - 1) / bucket_bytes;
    const int blocks = static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(wanted, 1), layers[l].fan_out));
    append_layer_pieces(layers[l], l, blocks, plan.pieces);
  }
  // Pieces run backwards through the buffer without gaps, so a run of consecutive pieces is one contiguous range.
  std::size_t cap = first_bucket_bytes;
  GradientBucket open{plan.pieces.front().begin, plan.pieces.front().end, 0};
  for (std::size_t p = 1; p <= plan.pieces.size(); ++p) {
    const bool last = p == plan.pieces.size();
    const std::size_t grown = last ? 0 : (open.end - plan.pieces[p].begin) * kBytesPerElement;
    if (last || grown > cap) {
      plan.buckets.push_back(open);
      if (last) break;
      cap = bucket_bytes;
      open = {plan.pieces[p].begin, plan.pieces[p].end, static_cast<int>(p)};
    } else {
      open.begin = plan.pieces[p].begin;
      open.last_piece = static_cast<int>(p);
    }
  }
  return plan;
}

}  // namespace mgpu
