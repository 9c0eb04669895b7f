// Purpose: the bucket plans of gradient_buckets.hpp (pure host code, tested on the CPU).
#include "train/gradient_buckets.hpp"

#include <algorithm>

#include "platform/error.hpp"

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

// The fewest near-equal row blocks that keep each of `layer`'s pieces within bucket_bytes, one row per block where even
// that does not (a single row may exceed it): blocks of ceil(rows / blocks) rows, the largest one carrying the bias.
// Searched from one block up (at most a layer's rows, a few thousand: no lower bound is worth its code).
int blocks_within(const DenseLayer& layer, std::size_t bucket_bytes) {
  const std::size_t row_bytes = static_cast<std::size_t>(layer.fan_in) * kBytesPerElement;
  const std::size_t bias_bytes = layer.bias_count() * kBytesPerElement;
  for (std::size_t blocks = 1; blocks < static_cast<std::size_t>(layer.fan_out); ++blocks) {
    const std::size_t largest_block_rows = (layer.fan_out + blocks - 1) / blocks;
    if (largest_block_rows * row_bytes + bias_bytes <= bucket_bytes) return static_cast<int>(blocks);
  }
  return layer.fan_out;
}

// Consecutive pieces [first, last] of a walk and the contiguous range [begin, end) they cover.
struct PieceRun {
  std::size_t begin = 0;
  std::size_t end = 0;
  int first = 0;
  int last = 0;
};

// Groups `pieces` (consecutive ones adjacent in the buffer, walking backwards through it as layerwise backward writes
// them) greedily into runs: the first closes at first_cap bytes, the others at cap; a single piece over its cap is a
// run alone.
std::vector<PieceRun> group_pieces(const std::vector<GradientPiece>& pieces, std::size_t first_cap, std::size_t cap) {
  std::vector<PieceRun> runs;
  std::size_t limit = first_cap;
  PieceRun open{pieces.front().begin, pieces.front().end, 0, 0};
  for (std::size_t p = 1; p <= pieces.size(); ++p) {
    const bool last = p == pieces.size();
    const std::size_t grown = last ? 0 : (open.end - pieces[p].begin) * kBytesPerElement;
    if (last || grown > limit) {
      runs.push_back(open);
      if (last) break;
      limit = cap;
      open = {pieces[p].begin, pieces[p].end, static_cast<int>(p), static_cast<int>(p)};
    } else {
      open.begin = pieces[p].begin;
      open.last = static_cast<int>(p);
    }
  }
  return runs;
}

// Every layer's weight rows in pieces of at most bucket_bytes, in layerwise backward order: last layer first, each
// layer from its last rows (consecutive pieces walk backwards through the buffer).
std::vector<GradientPiece> layerwise_pieces(const MlpSpec& model, std::size_t bucket_bytes) {
  std::vector<GradientPiece> pieces;
  const std::vector<DenseLayer> layers = model.layers();
  for (int l = static_cast<int>(layers.size()) - 1; l >= 0; --l)
    append_layer_pieces(layers[l], l, blocks_within(layers[l], bucket_bytes), pieces);
  return pieces;
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
  plan.pieces = layerwise_pieces(model, bucket_bytes);
  for (const PieceRun& run : group_pieces(plan.pieces, first_bucket_bytes, bucket_bytes))
    plan.buckets.push_back({run.begin, run.end, run.last});
  return plan;
}

BucketPlan deferred_overlap_plan(const MlpSpec& model, std::size_t bucket_bytes, std::size_t last_bucket_bytes) {
  MGPU_REQUIRE(bucket_bytes > 0 && last_bucket_bytes > 0, "bucket sizes must be positive");
  BucketPlan plan;
  plan.order = WeightGradientOrder::deferred;
  // Built in layerwise order, then reversed: first layer first.
  plan.pieces = layerwise_pieces(model, bucket_bytes);
  // Grouped in that reversed (buffer-end-first) walk, so that the small cap falls on the last bucket reduced.
  const std::vector<PieceRun> runs = group_pieces(plan.pieces, last_bucket_bytes, bucket_bytes);
  std::reverse(plan.pieces.begin(), plan.pieces.end());
  const int last_index = static_cast<int>(plan.pieces.size()) - 1;
  // A run of pieces [first, last] of the reversed walk is pieces [last_index - last, last_index - first] now; its
  // bucket is complete once the highest of them, last_index - first, is written.
  for (auto run = runs.rbegin(); run != runs.rend(); ++run)
    plan.buckets.push_back({run->begin, run->end, last_index - run->first});
  return plan;
}

BucketPlan bucket_plan_for(const TrainingSettings& settings, int world_size) {
  // One rank reduces nothing, and without overlap everything goes in one call after backward: no piece splitting.
  if (world_size == 1 || !settings.overlap) return whole_buffer_plan(settings.model);
  MGPU_REQUIRE(settings.bucket_mb > 0, "--bucket-mb must be positive");
  const auto bucket_bytes = static_cast<std::size_t>(std::max(4.0, settings.bucket_mb * 1e6));
  constexpr std::size_t kSmallBucketBytes = 1000000;
  const std::size_t small_bucket_bytes = std::min(bucket_bytes, kSmallBucketBytes);
  // Deferred: a small last bucket, the one reduction nothing is left to hide. Layerwise: a small first bucket (the last
  // layers, written first) gets the communication stream going early, as PyTorch DDP's 1 MB first bucket does.
  if (settings.overlap_order == WeightGradientOrder::deferred)
    return deferred_overlap_plan(settings.model, bucket_bytes, small_bucket_bytes);
  return overlap_plan(settings.model, bucket_bytes, small_bucket_bytes);
}

}  // namespace mgpu
