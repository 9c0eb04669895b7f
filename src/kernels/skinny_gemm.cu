// Purpose: the split-K fp32 GEMM of skinny_gemm.cuh: 64-row tiles of C streamed through a 3-stage pipeline of cp.async
// copies (16-byte, or 4-byte for operands that are not 16-byte aligned), 8 x 4 outputs per thread, the K parts of a
// tile summed in a fixed order (across the thread-block cluster, or by the last part through a workspace), and an
// optional elementwise epilogue.
#include <cooperative_groups.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "kernels/async_copy.cuh"
#include "kernels/dependent_launch.cuh"
#include "kernels/last_block.cuh"
#include "kernels/skinny_gemm.cuh"
#include "model/synthetic_data.hpp"
#include "platform/per_device_once.hpp"

namespace cg = cooperative_groups;

namespace mgpu::kernels {
namespace {

// Why this shape of kernel: with n <= 64 columns the product is a stream of A (the weights, read once) against a small
// B (the activations). One 64 x n output tile per block and K split over a cluster of up to 8 blocks gives a large
// layer (1024 x 16 x 4800) 16 x 8 = 128 blocks of 8 warps: every SM busy, each streaming its own slice of A through
// 16-byte asynchronous copies (4-byte ones are slower: only operands whose rows are not 16-byte aligned take them,
// such as medium's input layer of 847 floats, where they still beat cuBLAS's small tiles). Where the shared-memory
// reads of an 8 x 4 register tile bound it (1024 x 32 x 4800), cuBLAS can be faster: TunedGemm times both and keeps
// the faster per shape. At 1024 x 16 x 4800 it took under half of cuBLAS's time on H200 (graph replays, fp32).
//
// Why two ways of summing the K parts: a cluster's blocks must all be resident in one GPC at once, and 16 clusters of
// 8 do not fit the H200's GPCs at one block per SM, so the scheduler doubles blocks up on some SMs and leaves others
// idle (Nsight Compute found them idle for much of the kernel's time at 1024 x 32 x 4800). Without a cluster
// (last_block) every block is placed on its own; the partial tiles then go through a small workspace in L2 and the last
// part of a tile to finish adds them. Wide blocks (16 warps per SM, stages of 128 K values) hide more latency still.
// bench/results/performance-history.md keeps the probe's figures for each variant.
constexpr int kTileRows = 64;  // rows of C (and of op(A)) per block
constexpr int kStages = 3;     // 2 stages in flight while one is used: measured on H200 as fast as 4 to 8 stages of 32
constexpr int kRowsPerThread = 8;
constexpr int kColumnsPerThread = 4;
constexpr int kPad = 4;  // floats after each smem row: keeps rows 16-byte aligned and spreads them over the banks
constexpr int kMaxClusterSplits = 8;  // the portable cluster size
constexpr int kMaxSplits = 16;        // last_block: more parts than this measured no faster
// Wide blocks only for products at least this deep. A wide block takes a whole SM's registers, so the next kernel of
// the step cannot start its blocks beside it (dependent launch): timed alone, a wide block won on large's 1024-row
// products of depth 1024 too, but in the step it made them slower (large batch 32 on H200: up to 13% slower offered
// at every depth than with this threshold).
constexpr int kWideMinDepth = 2048;
// Narrow blocks are offered with cluster sums only (the launcher also takes them with last-block sums). Timed alone,
// a narrow last-block sum came close to the cluster's at large's 1024 x 32 x 1024 forward product, and chosen there it
// made the step 6% slower (large batch 32 on H200). Wide blocks, which cannot form clusters, are summed by
// the last block.
constexpr int kMaxColumns = 64;  // the widest tile
// Why wider products too (n > 64, a grid of column tiles): cuBLAS's tiles of 128 rows and more leave the step's
// products of 128 to 1024 samples in under one wave of 132 SMs (medium 1024's input layer, 256 x 1024 outputs: 16
// tiles of 128 x 128), and split-K variants of them still fill it with few, deep blocks; 64-row tiles with K split
// give such a product several times as many blocks, and fold the step's elementwise pass into their stores (an
// epilogue). Offered up to kMostWideOutputs outputs: past that cuBLAS's own tiles fill the GPU, and timing ours only
// lengthens tuning.
constexpr long long kMostWideOutputs = 1LL << 21;
constexpr int kMostColumnTiles = 65535;  // CUDA's limit on the grid's y dimension, at 16 columns per tile

// Threads per block and K values per pipeline stage: the narrow block, or the wide one (twice both: more warps per
// SM to hide latency, the same outputs per thread; 128 registers at most).
template <bool Wide>
struct BlockShape {
  static constexpr int threads = Wide ? 512 : 256;
  static constexpr int depth = Wide ? 128 : 64;
};

int stage_count(int k, bool wide) {
  const int depth = wide ? BlockShape<true>::depth : BlockShape<false>::depth;
  return (k + depth - 1) / depth;
}
bool shape_supported(int m, int n, int k) { return m > 0 && n > 0 && k > 0 && (n + 15) / 16 <= kMostColumnTiles; }
bool worth_offering(int m, int n) { return n <= kMaxColumns || static_cast<long long>(m) * n <= kMostWideOutputs; }
std::size_t tile_count(int m, int n, int columns) {
  return static_cast<std::size_t>((m + kTileRows - 1) / kTileRows) * ((n + columns - 1) / columns);
}

// Shared-memory tiles per stage, each with its global contiguous dimension contiguous (16-byte copies):
//   A transposed (stored [m, k] row by row, K contiguous): As[i][kk], row stride depth + kPad
//   A as stored [k, m] (M contiguous):                      As[kk][i], row stride kTileRows + kPad
//   B (stored [n, k], K contiguous):                        Bs[j][kk], row stride depth + kPad
template <int Columns, bool TransposeA, bool Wide>
struct Layout {
  static constexpr int kThreads = BlockShape<Wide>::threads;
  static constexpr int kTileDepth = BlockShape<Wide>::depth;
  static constexpr int a_stride = TransposeA ? kTileDepth + kPad : kTileRows + kPad;
  static constexpr int b_stride = kTileDepth + kPad;
  static constexpr int a_floats = (TransposeA ? kTileRows : kTileDepth) * a_stride;
  static constexpr int stage_floats = a_floats + Columns * b_stride;
  // The tile's 64 x Columns outputs at 32 per thread need group_threads threads; the block's other threads take other
  // K values of the same stage (groups), and their sums are added at the end.
  static constexpr int group_threads = (kTileRows / kRowsPerThread) * (Columns / kColumnsPerThread);
  static constexpr int groups = kThreads / group_threads;
  static constexpr int group_depth = kTileDepth / groups;  // a multiple of 4: K is read 4 values at a time
  static constexpr int tile_floats = kTileRows * Columns;
  static constexpr int shared_bytes =
      (kStages * stage_floats > groups * tile_floats ? kStages * stage_floats : groups * tile_floats) *
      static_cast<int>(sizeof(float));
  static_assert(kThreads % group_threads == 0 && group_depth % 4 == 0, "tile shape");
  static_assert(tile_floats % (kMaxClusterSplits * 32) == 0, "a tile splits evenly over the cluster's blocks");
};

__device__ __forceinline__ int clamp_count(int remaining) {
  return remaining < 0 ? 0 : (remaining > 4 ? 4 : remaining);
}

// One stage: A's rows [row0, row0 + 64) and B's columns [col0, col0 + Columns) at K values [k0, k0 + 64) below k_end,
// in 16-byte chunks along each one's contiguous dimension; consecutive lanes take consecutive chunks of a row
// (coalesced), and the padded strides put a quarter-warp's 8 chunks on 32 different banks. A's part and B's part are
// separate functions: A's may be started before the kernel ahead has finished (skinny_gemm's a_is_stable).
template <int Columns, bool TransposeA, bool Wide, bool Vector>
__device__ __forceinline__ void load_stage_a(float* stage, const float* a, int lda, int m, int row0, int k0,
                                             int k_end) {
  using L = Layout<Columns, TransposeA, Wide>;
  float* as = stage;
  constexpr int a_chunks = kTileRows * L::kTileDepth / 4;
#pragma unroll
  for (int chunk = threadIdx.x; chunk < a_chunks; chunk += L::kThreads) {
    if (TransposeA) {
      const int i = chunk / (L::kTileDepth / 4);
      const int kk = chunk % (L::kTileDepth / 4) * 4;
      const int row = row0 + i;
      const int valid = row < m ? clamp_count(k_end - (k0 + kk)) : 0;
      copy4<Vector>(as + i * L::a_stride + kk, valid > 0 ? a + static_cast<std::size_t>(row) * lda + k0 + kk : a,
                    valid);
    } else {
      const int kk = chunk / (kTileRows / 4);
      const int i = chunk % (kTileRows / 4) * 4;
      const int depth = k0 + kk;
      const int valid = depth < k_end ? clamp_count(m - (row0 + i)) : 0;
      copy4<Vector>(as + kk * L::a_stride + i, valid > 0 ? a + static_cast<std::size_t>(depth) * lda + row0 + i : a,
                    valid);
    }
  }
}

template <int Columns, bool TransposeA, bool Wide, bool Vector>
__device__ __forceinline__ void load_stage_b(float* stage, const float* b, int ldb, int n, int col0, int k0,
                                             int k_end) {
  using L = Layout<Columns, TransposeA, Wide>;
  float* bs = stage + L::a_floats;
#pragma unroll
  for (int chunk = threadIdx.x; chunk < Columns * L::kTileDepth / 4; chunk += L::kThreads) {
    const int j = chunk / (L::kTileDepth / 4);
    const int kk = chunk % (L::kTileDepth / 4) * 4;
    const int column = col0 + j;
    const int valid = column < n ? clamp_count(k_end - (k0 + kk)) : 0;
    copy4<Vector>(bs + j * L::b_stride + kk, valid > 0 ? b + static_cast<std::size_t>(column) * ldb + k0 + kk : b,
                  valid);
  }
}

template <int Columns, bool TransposeA, bool Wide, bool Vector>
__device__ __forceinline__ void load_stage(float* stage, const float* a, int lda, const float* b, int ldb, int m, int n,
                                           int row0, int col0, int k0, int k_end) {
  load_stage_a<Columns, TransposeA, Wide, Vector>(stage, a, lda, m, row0, k0, k_end);
  load_stage_b<Columns, TransposeA, Wide, Vector>(stage, b, ldb, n, col0, k0, k_end);
}

// Row r (0..7) of a thread's outputs within the tile. A transposed: rows ti + 8r, so a quarter-warp's float4 reads
// along K hit 8 different rows 68 floats apart (all 32 banks). Otherwise two runs of 4 contiguous rows 32 apart, read
// as float4 along M (a quarter-warp covers 128 contiguous bytes).
template <bool TransposeA>
__device__ __forceinline__ int row_of(int ti, int r) {
  return TransposeA ? ti + 8 * r : 4 * ti + (r < 4 ? r : 32 + r - 4);
}

// The epilogue's value of C(row, column) from the product's `value` (SkinnyEpilogue). The storing threads read the
// step's values here, after the parts are summed: a variant that read them once per thread (every thread, before the
// last part's hand-over) and mixed the mask key once made medium batch 64 on H200 2% slower (--timing step, 3
// alternating rounds).
__device__ __forceinline__ float apply_epilogue(const SkinnyEpilogue& epilogue, float value, int row, int column,
                                                int ldc) {
  switch (epilogue.kind) {
    case SkinnyEpilogue::Kind::bias_relu_dropout: {
      const float relu = fmaxf(value + epilogue.bias[row], 0.0f);
      const StepParams& p = *epilogue.params;
      const bool keep = epilogue.drop_probability == 0.0f ||
                        synthetic::dropout_keep(p.seed, p.run, p.step, epilogue.layer, p.first_sample + column,
                                                static_cast<std::uint32_t>(row), epilogue.drop_probability);
      return keep ? relu * epilogue.keep_scale : 0.0f;
    }
    case SkinnyEpilogue::Kind::relu_dropout_backward:
      return epilogue.activation[static_cast<std::size_t>(column) * ldc + row] > 0.0f ? value * epilogue.keep_scale
                                                                                      : 0.0f;
    default:
      return value;
  }
}

// Where the K parts of a tile are summed: the kernel's reduction mode and, for last_block, the workspace.
struct PartSum {
  bool last_block = false;
  float* partials = nullptr;     // [tile][split][tile_floats]
  unsigned* counters = nullptr;  // [tile]: how many parts of the tile have stored their partial tile
};

// Grid: x = row tile * splits + split (a cluster's blocks are consecutive in x), y = column tile.
template <int Columns, bool TransposeA, bool Wide, bool Vector>
__global__ void __launch_bounds__(BlockShape<Wide>::threads)
    skinny_gemm_kernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                       bool accumulate, int splits, int split_depth, bool a_is_stable, SkinnyEpilogue epilogue,
                       PartSum part_sum) {
  using L = Layout<Columns, TransposeA, Wide>;
  constexpr int kThreads = L::kThreads;
  constexpr int kTileDepth = L::kTileDepth;
  extern __shared__ float4 shared_storage[];  // float4: 16-byte alignment for the vector reads
  float* shared = reinterpret_cast<float*>(shared_storage);

  const int split = blockIdx.x % splits;
  const int row0 = (blockIdx.x / splits) * kTileRows;
  const int col0 = blockIdx.y * Columns;
  const int k_begin = split * split_depth;
  const int k_end = min(k, k_begin + split_depth);
  const int stages = k_end > k_begin ? (k_end - k_begin + kTileDepth - 1) / kTileDepth : 0;

  // This thread's outputs: rows row_of(ti, 0..7), columns j0..j0+3, summed over the K values of its group. A
  // quarter-warp shares j0 (its B reads are broadcasts).
  const int group = threadIdx.x / L::group_threads;
  const int member = threadIdx.x % L::group_threads;
  const int ti = member % 8;
  const int j0 = (member / 8) * kColumnsPerThread;
  float sum[kRowsPerThread][kColumnsPerThread] = {};

  // Launched dependent (dependent_launch.cuh). B (the activations or the output gradient) is the kernel ahead's
  // output, C may be read (accumulate) or is read by it, so both wait; a stable A (the weights) does not: its first
  // stages stream in while the kernel ahead finishes. They join the first commit group below, which the first wait
  // of the main loop covers. (The workspace is touched only after the wait too: the kernel ahead may be this one's
  // previous call.)
  if (a_is_stable) {
    for (int s = 0; s < kStages - 1 && s < stages; ++s) {
      load_stage_a<Columns, TransposeA, Wide, Vector>(shared + s * L::stage_floats, a, lda, m, row0,
                                                      k_begin + s * kTileDepth, k_end);
    }
  }
  wait_for_previous_kernel();
  allow_next_kernel_to_start();
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < stages) {
      if (!a_is_stable) {
        load_stage_a<Columns, TransposeA, Wide, Vector>(shared + s * L::stage_floats, a, lda, m, row0,
                                                        k_begin + s * kTileDepth, k_end);
      }
      load_stage_b<Columns, TransposeA, Wide, Vector>(shared + s * L::stage_floats, b, ldb, n, col0,
                                                      k_begin + s * kTileDepth, k_end);
    }
    commit_copies();  // empty groups too: the wait below counts groups
  }
  for (int s = 0; s < stages; ++s) {
    // Stage s has landed once at most kStages - 2 later groups are pending; the barrier also tells every thread that
    // all are done with stage s - 1, whose buffer the next load reuses.
    wait_copies<kStages - 2>();
    __syncthreads();
    const int next = s + kStages - 1;
    if (next < stages) {
      load_stage<Columns, TransposeA, Wide, Vector>(shared + (next % kStages) * L::stage_floats, a, lda, b, ldb, m, n,
                                                    row0, col0, k_begin + next * kTileDepth, k_end);
    }
    commit_copies();
    const float* as = shared + (s % kStages) * L::stage_floats;
    const float* bs = as + L::a_floats;
#pragma unroll
    for (int d = 0; d < L::group_depth; d += 4) {
      const int kk = group * L::group_depth + d;
      float av[kRowsPerThread][4];
      float bv[kColumnsPerThread][4];
#pragma unroll
      for (int q = 0; q < kColumnsPerThread; ++q) {
        const float4 v = *reinterpret_cast<const float4*>(bs + (j0 + q) * L::b_stride + kk);
        bv[q][0] = v.x, bv[q][1] = v.y, bv[q][2] = v.z, bv[q][3] = v.w;
      }
      if (TransposeA) {
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r) {
          const float4 v = *reinterpret_cast<const float4*>(as + row_of<true>(ti, r) * L::a_stride + kk);
          av[r][0] = v.x, av[r][1] = v.y, av[r][2] = v.z, av[r][3] = v.w;
        }
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const float4 v = *reinterpret_cast<const float4*>(as + (kk + e) * L::a_stride + 4 * ti + 32 * half);
            av[4 * half + 0][e] = v.x, av[4 * half + 1][e] = v.y, av[4 * half + 2][e] = v.z, av[4 * half + 3][e] = v.w;
          }
        }
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#pragma unroll
        for (int r = 0; r < kRowsPerThread; ++r) {
#pragma unroll
          for (int q = 0; q < kColumnsPerThread; ++q) sum[r][q] = fmaf(av[r][e], bv[q][e], sum[r][q]);
        }
      }
    }
  }
  wait_copies<0>();
  __syncthreads();  // the pipeline's buffers now hold the groups' partial tiles

  // Groups' partial tiles, column-major (tile[j * 64 + i]: C's own order, for coalesced stores), then their sum in
  // group order into group 0's tile, each element by one thread.
  float* tiles = shared;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int i = row_of<TransposeA>(ti, r);
#pragma unroll
    for (int q = 0; q < kColumnsPerThread; ++q) tiles[group * L::tile_floats + (j0 + q) * kTileRows + i] = sum[r][q];
  }
  __syncthreads();
  for (int e = threadIdx.x; e < L::tile_floats; e += kThreads) {
    float total = tiles[e];
    for (int g = 1; g < L::groups; ++g) total += tiles[g * L::tile_floats + e];
    tiles[e] = total;
  }

  const auto store = [&](int e, float value) {
    const int row = row0 + e % kTileRows;
    const int column = col0 + e / kTileRows;
    if (row < m && column < n) {
      float* out = c + static_cast<std::size_t>(column) * ldc + row;
      *out = accumulate ? *out + value : apply_epilogue(epilogue, value, row, column, ldc);
    }
  };
  if (splits == 1) {  // each thread stores the elements it summed
    for (int e = threadIdx.x; e < L::tile_floats; e += kThreads) store(e, tiles[e]);
    return;
  }
  if (part_sum.last_block) {
    // Each part stores its partial tile, then counts itself in; the part that counts last adds all of them in part
    // order (its own from shared memory: the same value) and stores C (last_block.cuh).
    const std::size_t tile = blockIdx.x / splits + static_cast<std::size_t>(gridDim.x / splits) * blockIdx.y;
    float* parts = part_sum.partials + tile * splits * L::tile_floats;
    for (int e = threadIdx.x; e < L::tile_floats; e += kThreads) parts[split * L::tile_floats + e] = tiles[e];
    if (!arrives_last(part_sum.counters + tile, static_cast<unsigned>(splits))) return;
    for (int e = threadIdx.x; e < L::tile_floats; e += kThreads) {
      float total = 0.0f;
      for (int q = 0; q < splits; ++q) total += q == split ? tiles[e] : __ldcg(parts + q * L::tile_floats + e);
      store(e, total);
    }
    if (threadIdx.x == 0) part_sum.counters[tile] = 0;
    return;
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The cluster's blocks hold the same tile's sums over different K parts. After the barrier (which also orders
  // every block's shared stores) block r adds slice r of the tile over all blocks, in block order: the same bits on
  // every call. The second barrier keeps each block's shared memory alive until the others have read it.
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  const int slice = L::tile_floats / splits;
  const int first = static_cast<int>(cluster.block_rank()) * slice;
  for (int e = first + threadIdx.x; e < first + slice; e += kThreads) {
    float total = 0.0f;
    for (int q = 0; q < splits; ++q) total += cluster.map_shared_rank(tiles, q)[e];
    store(e, total);
  }
  cluster.sync();
#else
  __trap();  // the host offers splits > 1 only on devices with clusters
#endif
}

template <int Columns, bool TransposeA, bool Wide, bool Vector>
void set_shared_limit() {
  // More than the default 48 KiB of dynamic shared memory is an opt-in per kernel and device.
  const cudaError_t status = cudaFuncSetAttribute(skinny_gemm_kernel<Columns, TransposeA, Wide, Vector>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  Layout<Columns, TransposeA, Wide>::shared_bytes);
  if (status != cudaSuccess) (void)cudaGetLastError();  // the launch then reports it
}

template <int Columns, bool TransposeA, bool Wide, bool Vector>
cudaError_t launch(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
                   bool accumulate, int splits, bool a_is_stable, const SkinnyEpilogue& epilogue,
                   const PartSum& part_sum, cudaStream_t stream) {
  using L = Layout<Columns, TransposeA, Wide>;
  // Each part's K range is a whole number of stages (the last part takes the remainder, possibly nothing).
  const int split_depth = (stage_count(k, Wide) + splits - 1) / splits * L::kTileDepth;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>((m + kTileRows - 1) / kTileRows * splits),
                        static_cast<unsigned>((n + Columns - 1) / Columns));
  config.blockDim = dim3(L::kThreads);
  config.dynamicSmemBytes = L::shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (splits > 1 && !part_sum.last_block) {
    cudaLaunchAttribute& cluster = attributes[count++];
    cluster = cudaLaunchAttribute{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(splits);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
  }
  if (dependent_launch_enabled()) attributes[count++] = dependent_launch_attribute();
  config.attrs = attributes;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, skinny_gemm_kernel<Columns, TransposeA, Wide, Vector>, m, n, k, a, lda, b, ldb, c,
                            ldc, accumulate, splits, split_depth, a_is_stable, epilogue, part_sum);
}

// Every instantiation of the kernel: its tile width, layout of A and block shape, its launcher and its shared-memory
// opt-in.
struct Variant {
  int columns;
  bool transpose_a;
  bool wide;
  bool vector;  // 16-byte copies (operands 16-byte aligned), else 4-byte ones
  cudaError_t (*launch)(int, int, int, const float*, int, const float*, int, float*, int, bool, int, bool,
                        const SkinnyEpilogue&, const PartSum&, cudaStream_t);
  void (*prepare)();
};
#define MGPU_SKINNY_VARIANT(columns, transpose_a, wide, vector)                     \
  {                                                                                 \
    columns, transpose_a, wide, vector, launch<columns, transpose_a, wide, vector>, \
        set_shared_limit<columns, transpose_a, wide, vector>                        \
  }
#define MGPU_SKINNY_VARIANTS(wide, vector)                                                       \
  MGPU_SKINNY_VARIANT(16, false, wide, vector), MGPU_SKINNY_VARIANT(16, true, wide, vector),     \
      MGPU_SKINNY_VARIANT(32, false, wide, vector), MGPU_SKINNY_VARIANT(32, true, wide, vector), \
      MGPU_SKINNY_VARIANT(64, false, wide, vector), MGPU_SKINNY_VARIANT(64, true, wide, vector)
constexpr Variant kVariants[] = {MGPU_SKINNY_VARIANTS(false, true), MGPU_SKINNY_VARIANTS(false, false),
                                 MGPU_SKINNY_VARIANTS(true, true), MGPU_SKINNY_VARIANTS(true, false)};
#undef MGPU_SKINNY_VARIANTS
#undef MGPU_SKINNY_VARIANT

// The opt-ins, once per device before its first launch.
cudaError_t prepare_current_device() {
  static std::atomic<std::uint64_t> prepared{0};
  return once_per_device(prepared, [] {
    for (const Variant& variant : kVariants) variant.prepare();
    return cudaSuccess;
  });
}

bool uses_workspace(const SkinnyGemmConfig& config) {
  return config.splits > 1 && config.reduction == SkinnyReduction::last_block;
}

}  // namespace

std::string describe(const SkinnyGemmConfig& config) {
  std::string text = std::to_string(config.tile_columns) + " columns, " + std::to_string(config.splits) +
                     (config.splits == 1 ? " split" : " splits");
  if (config.wide) text += ", wide";
  if (config.splits > 1) text += config.reduction == SkinnyReduction::cluster ? ", cluster sum" : ", last-block sum";
  return text;
}

std::size_t skinny_workspace_floats(int m, int n, const SkinnyGemmConfig& config) {
  if (!uses_workspace(config) || config.tile_columns <= 0) return 0;
  return tile_count(m, n, config.tile_columns) * config.splits * kTileRows * config.tile_columns;
}

std::size_t skinny_workspace_counters(int m, int n, const SkinnyGemmConfig& config) {
  if (!uses_workspace(config) || config.tile_columns <= 0) return 0;
  return tile_count(m, n, config.tile_columns);
}

namespace {

// Whether `workspace` serves `config` on this shape (always, where the configuration needs none).
bool workspace_has_room(int m, int n, const SkinnyGemmConfig& config, const SkinnyWorkspace& workspace) {
  return !uses_workspace(config) || (workspace.partials != nullptr && workspace.counters != nullptr &&
                                     skinny_workspace_floats(m, n, config) <= workspace.partial_floats &&
                                     skinny_workspace_counters(m, n, config) <= workspace.counter_count);
}

}  // namespace

std::vector<SkinnyGemmConfig> skinny_gemm_configs(int m, int n, int k, const SkinnyWorkspace& workspace) {
  std::vector<SkinnyGemmConfig> configs;
  if (!shape_supported(m, n, k) || !worth_offering(m, n)) return configs;
  int device = 0;
  int major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess || major < 9) {
    (void)cudaGetLastError();
    return configs;
  }
  for (int columns : {16, 32, 64}) {
    // A tile much wider than n only multiplies zeros; 16 columns always qualify.
    if (columns > 16 && columns >= 2 * n) continue;
    for (const bool wide : {false, true}) {
      if (wide && k < kWideMinDepth) continue;
      // Never more parts than K has stages: the narrow block's up to a cluster of 8, the wide block's up to 16 summed
      // by the last block (the note on narrow blocks at the top).
      const int stages = stage_count(k, wide);
      const SkinnyReduction reduction = wide ? SkinnyReduction::last_block : SkinnyReduction::cluster;
      const int most = wide ? kMaxSplits : kMaxClusterSplits;
      for (int splits = 1; splits <= most && splits <= stages; splits *= 2) {
        const SkinnyGemmConfig config{columns, splits, splits > 1 ? reduction : SkinnyReduction::cluster, wide};
        if (workspace_has_room(m, n, config, workspace)) configs.push_back(config);
      }
    }
  }
  return configs;
}

cudaError_t skinny_gemm(bool transpose_a, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                        float* c, int ldc, bool accumulate, SkinnyGemmConfig config, cudaStream_t stream,
                        bool a_is_stable, const SkinnyEpilogue& epilogue, const SkinnyWorkspace& workspace) {
  // 16-byte copies where A's and B's columns all start on 16-byte boundaries, 4-byte ones otherwise (e.g. rows of 847
  // or 3 floats).
  const auto aligned = [](const float* pointer, int leading) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0 && leading % 4 == 0;
  };
  const bool power_of_two_splits = config.splits > 0 && (config.splits & (config.splits - 1)) == 0;
  const bool splits_allowed =
      power_of_two_splits &&
      (uses_workspace(config) ? config.splits <= kMaxSplits
                              : config.splits <= kMaxClusterSplits && (config.splits == 1 || !config.wide));
  if (!shape_supported(m, n, k) || lda < (transpose_a ? k : m) || ldb < k || ldc < m ||
      reinterpret_cast<std::uintptr_t>(a) % 4 != 0 || reinterpret_cast<std::uintptr_t>(b) % 4 != 0 || !splits_allowed ||
      !workspace_has_room(m, n, config, workspace) || (accumulate && epilogue.kind != SkinnyEpilogue::Kind::none))
    return cudaErrorInvalidValue;
  const bool vector = aligned(a, lda) && aligned(b, ldb);
  const cudaError_t prepared = prepare_current_device();
  if (prepared != cudaSuccess) return prepared;
  PartSum part_sum;
  if (uses_workspace(config)) part_sum = {true, workspace.partials, workspace.counters};
  for (const Variant& variant : kVariants) {
    if (variant.columns == config.tile_columns && variant.transpose_a == transpose_a && variant.wide == config.wide &&
        variant.vector == vector)
      return variant.launch(m, n, k, a, lda, b, ldb, c, ldc, accumulate, config.splits, a_is_stable, epilogue, part_sum,
                            stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace mgpu::kernels
