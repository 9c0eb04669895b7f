// Purpose: the all-reduce bucket plans (layerwise and deferred): pieces tile every layer's gradient in backward order,
// buckets are contiguous, cover the flat buffer exactly once, respect their caps and close after the piece that
// completes them.
#include <gtest/gtest.h>

#include <vector>

#include "train/gradient_buckets.hpp"

namespace mgpu {
namespace {

constexpr std::size_t kFloat = sizeof(float);

// Each piece carries its layer's rows [row_begin, row_end), and the bias when it holds the last rows.
void expect_pieces_match_layers(const MlpSpec& model, const BucketPlan& plan) {
  const std::vector<DenseLayer> layers = model.layers();
  for (const GradientPiece& piece : plan.pieces) {
    const DenseLayer& layer = layers[piece.layer];
    EXPECT_LT(piece.row_begin, piece.row_end);
    EXPECT_EQ(piece.begin, layer.weight_offset + std::size_t(piece.row_begin) * layer.fan_in);
    // The piece with the last rows carries the bias (written before the weight gradient); the others end at rows.
    const std::size_t rows_end = layer.weight_offset + std::size_t(piece.row_end) * layer.fan_in;
    EXPECT_EQ(piece.end, piece.row_end == layer.fan_out ? rows_end + layer.bias_count() : rows_end);
  }
}

// Every element of [0, parameter_count) in exactly one piece and one bucket. Pieces and buckets walk through the buffer
// without gaps in backward order: layerwise backwards (last layer first, the first piece ends at the buffer's end),
// deferred forwards (first layer first, each layer's rows from the first block); each bucket closes at the piece
// that reaches its far edge in that walk.
void expect_well_formed(const MlpSpec& model, const BucketPlan& plan, WeightGradientOrder order) {
  const std::size_t count = model.parameter_count();
  ASSERT_FALSE(plan.pieces.empty());
  ASSERT_FALSE(plan.buckets.empty());
  EXPECT_EQ(plan.order, order);
  const bool forwards = order == WeightGradientOrder::deferred;
  // The edge of a range where the walk enters it and where it leaves it.
  const auto entry = [&](const auto& range) { return forwards ? range.begin : range.end; };
  const auto exit = [&](const auto& range) { return forwards ? range.end : range.begin; };
  const std::size_t start = forwards ? 0 : count;
  const std::size_t finish = forwards ? count : 0;
  EXPECT_EQ(entry(plan.pieces.front()), start);
  EXPECT_EQ(exit(plan.pieces.back()), finish);
  for (std::size_t p = 1; p < plan.pieces.size(); ++p) {
    EXPECT_EQ(entry(plan.pieces[p]), exit(plan.pieces[p - 1])) << "piece " << p;
    if (forwards) {
      EXPECT_GE(plan.pieces[p].layer, plan.pieces[p - 1].layer) << "first layer first";
    } else {
      EXPECT_LE(plan.pieces[p].layer, plan.pieces[p - 1].layer) << "backward order";
    }
  }
  expect_pieces_match_layers(model, plan);
  EXPECT_EQ(entry(plan.buckets.front()), start);
  EXPECT_EQ(exit(plan.buckets.back()), finish);
  EXPECT_EQ(plan.buckets.back().last_piece, static_cast<int>(plan.pieces.size()) - 1);
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    const GradientBucket& bucket = plan.buckets[b];
    EXPECT_LT(bucket.begin, bucket.end);
    EXPECT_EQ(exit(plan.pieces[bucket.last_piece]), exit(bucket)) << "bucket " << b;
    if (b > 0) {
      EXPECT_EQ(entry(bucket), exit(plan.buckets[b - 1])) << "bucket " << b;
      EXPECT_GT(bucket.last_piece, plan.buckets[b - 1].last_piece);
    }
  }
}

void expect_well_formed(const MlpSpec& model, const BucketPlan& plan) {
  expect_well_formed(model, plan, WeightGradientOrder::layerwise);
}

void expect_well_formed_deferred(const MlpSpec& model, const BucketPlan& plan) {
  expect_well_formed(model, plan, WeightGradientOrder::deferred);
}

TEST(GradientBuckets, WholeBufferPlanIsOneBucketOnePiecePerLayer) {
  const MlpSpec model = preset_model("large");
  const BucketPlan plan = whole_buffer_plan(model);
  expect_well_formed(model, plan);
  EXPECT_EQ(plan.pieces.size(), std::size_t(model.layer_count()));
  ASSERT_EQ(plan.buckets.size(), 1u);
}

TEST(GradientBuckets, LargeModelSplitsTheInputLayerAndKeepsCaps) {
  const MlpSpec model = preset_model("large");
  const std::size_t cap = 8000000;
  const std::size_t first_cap = 1000000;
  const BucketPlan plan = overlap_plan(model, cap, first_cap);
  expect_well_formed(model, plan);
  // The input layer (4800 x 1024 + 1024 floats, 19.7 MB) is cut into 3 pieces of at most 8 MB.
  int input_pieces = 0;
  for (const GradientPiece& piece : plan.pieces) {
    EXPECT_LE((piece.end - piece.begin) * kFloat, cap);
    input_pieces += piece.layer == 0;
  }
  EXPECT_EQ(input_pieces, 3);
  EXPECT_LE((plan.buckets.front().end - plan.buckets.front().begin) * kFloat, first_cap);
  for (const GradientBucket& bucket : plan.buckets) EXPECT_LE((bucket.end - bucket.begin) * kFloat, cap);
  EXPECT_GE(plan.buckets.size(), 4u);
}

TEST(GradientBuckets, TinyCapsGiveOneRowPiecesAndStillCoverEverything) {
  // A cap below one row's bytes: every row is its own piece and its own bucket (odd widths, a bias-free output).
  const MlpSpec model = custom_model({13, 21, 7, 2}, 0.0);
  const BucketPlan plan = overlap_plan(model, 4, 4);
  expect_well_formed(model, plan);
  EXPECT_EQ(plan.pieces.size(), std::size_t(21 + 7 + 2));
  EXPECT_EQ(plan.buckets.size(), plan.pieces.size());
}

TEST(GradientBuckets, HugeCapsGiveOneBucketOfUnsplitLayers) {
  const MlpSpec model = preset_model("medium");
  const BucketPlan plan = overlap_plan(model, 1u << 30, 1u << 30);
  expect_well_formed(model, plan);
  EXPECT_EQ(plan.pieces.size(), std::size_t(model.layer_count()));
  EXPECT_EQ(plan.buckets.size(), 1u);
}

// One output layer of 1 x 12 floats: 48 bytes of gradient, 4 bytes a row, no bias. Piece and bucket byte sizes of a
// plan, in its reduction order.
const MlpSpec kTwelveRows = custom_model({1, 12}, 0.0);
std::vector<std::size_t> piece_bytes(const BucketPlan& plan) {
  std::vector<std::size_t> bytes;
  for (const GradientPiece& piece : plan.pieces) bytes.push_back((piece.end - piece.begin) * kFloat);
  return bytes;
}
std::vector<std::size_t> bucket_bytes(const BucketPlan& plan) {
  std::vector<std::size_t> bytes;
  for (const GradientBucket& bucket : plan.buckets) bytes.push_back((bucket.end - bucket.begin) * kFloat);
  return bytes;
}
using Sizes = std::vector<std::size_t>;

// Both orders with every cap at `cap` bytes: pieces of `sizes`, each a bucket alone (two would exceed the cap).
void expect_one_piece_per_bucket(std::size_t cap, const Sizes& sizes) {
  const BucketPlan plan = overlap_plan(kTwelveRows, cap, cap);
  expect_well_formed(kTwelveRows, plan);
  EXPECT_EQ(piece_bytes(plan), sizes) << "cap " << cap;
  EXPECT_EQ(bucket_bytes(plan), sizes) << "cap " << cap;
  const BucketPlan deferred = deferred_overlap_plan(kTwelveRows, cap, cap);
  expect_well_formed_deferred(kTwelveRows, deferred);
  EXPECT_EQ(bucket_bytes(deferred), sizes) << "deferred, cap " << cap;
}

TEST(GradientBuckets, GradientAnExactMultipleOfTheBucketFillsEveryBucket) {
  // 48 bytes = 3 x 16: three full buckets, no remainder bucket.
  expect_one_piece_per_bucket(16, {16, 16, 16});
}

TEST(GradientBuckets, ABucketOneByteLargerKeepsThePiecesOneByteSmallerSplitsFurther) {
  // 17 bytes: 48 / 17 rounds up to the same 3 pieces; 15 bytes: 4 pieces of 3 rows (12 bytes).
  expect_one_piece_per_bucket(17, {16, 16, 16});
  expect_one_piece_per_bucket(15, {12, 12, 12, 12});
}

TEST(GradientBuckets, PiecesStayWithinTheCapWhereRowsAllowWhatTheLayersBytesOverTheCapDoNot) {
  // 7 bytes: 48 / 7 rounds up to 7 blocks, whose ceil(12 / 7) = 2 rows (8 bytes) exceed the cap; one row (4 bytes)
  // fits, so every row is a piece, and two would exceed the cap, so each is a bucket alone.
  expect_one_piece_per_bucket(7, Sizes(12, 4));
  // With a bias: a 4 x 4 hidden layer (16 weights + 4 bias = 80 bytes) at 56 bytes: 80 / 56 rounds up to 2 blocks of
  // 2 rows, the last rows' block carrying the bias (48 bytes), which fits; at 47 bytes it does not, nor do 3 blocks
  // (still 2 rows each), so every row is a piece (the last with the bias: 32 bytes). The output layer's 16 bytes come
  // first (backward order).
  const MlpSpec hidden = custom_model({4, 4, 1}, 0.0);
  for (const std::size_t cap : {std::size_t{56}, std::size_t{47}}) {
    const BucketPlan plan = overlap_plan(hidden, cap, cap);
    expect_well_formed(hidden, plan);
    for (const GradientPiece& piece : plan.pieces) EXPECT_LE((piece.end - piece.begin) * kFloat, cap) << "cap " << cap;
  }
  EXPECT_EQ(piece_bytes(overlap_plan(hidden, 56, 56)), (Sizes{16, 48, 32}));
  EXPECT_EQ(piece_bytes(overlap_plan(hidden, 47, 47)), (Sizes{16, 32, 16, 16, 16}));
}

TEST(GradientBuckets, OrderNamesAreTheCommandLineWords) {
  EXPECT_STREQ(setting_name(WeightGradientOrder::deferred), "deferred");
  EXPECT_STREQ(setting_name(WeightGradientOrder::layerwise), "layerwise");
}

TEST(GradientBuckets, ABucketExactlyFullTakesThePieceThatFillsIt) {
  // First cap 32 = two 16-byte pieces exactly: they share the first bucket; at 31 they do not, at 33 nothing changes.
  EXPECT_EQ(bucket_bytes(overlap_plan(kTwelveRows, 16, 32)), (Sizes{32, 16}));
  EXPECT_EQ(bucket_bytes(overlap_plan(kTwelveRows, 16, 31)), (Sizes{16, 16, 16}));
  EXPECT_EQ(bucket_bytes(overlap_plan(kTwelveRows, 16, 33)), (Sizes{32, 16}));
  // Deferred: the small cap is the last bucket's, filled from the buffer's end.
  EXPECT_EQ(bucket_bytes(deferred_overlap_plan(kTwelveRows, 16, 32)), (Sizes{16, 32}));
  EXPECT_EQ(bucket_bytes(deferred_overlap_plan(kTwelveRows, 16, 31)), (Sizes{16, 16, 16}));
  // The whole gradient exactly one bucket: a single bucket of every piece.
  EXPECT_EQ(bucket_bytes(overlap_plan(kTwelveRows, 16, 48)), (Sizes{48}));
  EXPECT_EQ(bucket_bytes(overlap_plan(kTwelveRows, 48, 48)), (Sizes{48}));
  EXPECT_EQ(piece_bytes(overlap_plan(kTwelveRows, 48, 48)), (Sizes{48}));
}

TEST(GradientBuckets, DeferredLargePlanStartsWithTheInputLayerAndEndsWithASmallBucket) {
  const MlpSpec model = preset_model("large");
  const std::size_t cap = 8000000;
  const std::size_t last_cap = 1000000;
  const BucketPlan plan = deferred_overlap_plan(model, cap, last_cap);
  expect_well_formed_deferred(model, plan);
  // The input layer's 19.7 MB in 3 pieces, reduced first; every piece and bucket within the cap.
  ASSERT_GE(plan.pieces.size(), 3u);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(plan.pieces[p].layer, 0) << "piece " << p;
  EXPECT_EQ(plan.pieces[3].layer, 1);
  for (const GradientPiece& piece : plan.pieces) EXPECT_LE((piece.end - piece.begin) * kFloat, cap);
  for (const GradientBucket& bucket : plan.buckets) EXPECT_LE((bucket.end - bucket.begin) * kFloat, cap);
  // The last bucket, whose reduction nothing hides, within the small cap: layers 4 and 5 (256 x 512 + 256 and
  // 3 x 256 floats, 0.53 MB).
  const GradientBucket& last = plan.buckets.back();
  EXPECT_LE((last.end - last.begin) * kFloat, last_cap);
  EXPECT_EQ(last.begin, model.layers()[4].weight_offset);
  EXPECT_GE(plan.buckets.size(), 5u);
}

TEST(GradientBuckets, DeferredTinyCapsGiveOneRowPiecesAndStillCoverEverything) {
  const MlpSpec model = custom_model({13, 21, 7, 2}, 0.0);
  const BucketPlan plan = deferred_overlap_plan(model, 4, 4);
  expect_well_formed_deferred(model, plan);
  EXPECT_EQ(plan.pieces.size(), std::size_t(21 + 7 + 2));
  EXPECT_EQ(plan.buckets.size(), plan.pieces.size());
  // Rows in order within each layer.
  EXPECT_EQ(plan.pieces.front().row_begin, 0);
  EXPECT_EQ(plan.pieces[1].row_begin, 1);
}

TEST(GradientBuckets, DeferredHugeCapsGiveOneBucketOfUnsplitLayers) {
  const MlpSpec model = preset_model("medium");
  const BucketPlan plan = deferred_overlap_plan(model, 1u << 30, 1u << 30);
  expect_well_formed_deferred(model, plan);
  EXPECT_EQ(plan.pieces.size(), std::size_t(model.layer_count()));
  EXPECT_EQ(plan.buckets.size(), 1u);
}

}  // namespace
}  // namespace mgpu
