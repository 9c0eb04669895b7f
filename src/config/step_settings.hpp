// Purpose: the resolved settings of one configuration's training step (TrainingSettings) and the types they are
// made of: what the resolver (config/resolver.hpp) decides once per configuration and every trainer reads as given.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "config/setting_values.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// Adam as docs/measurement.md fixes it (Kingma & Ba with bias correction; epsilon added to sqrt(v_hat)).
struct AdamSettings {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

// GEMM arithmetic: fp32 (true fp32 products), tf32 (CUBLAS_COMPUTE_32F_FAST_TF32: tensor cores, fp32 accumulation),
// bf16 (bf16 operands, fp32 accumulation and fp32 master weights), tf32x3 (split TF32: each fp32 operand as a TF32
// "big" part and the TF32 rounding of its remainder, three tensor-core products summed in fp32, small x small
// dropped: fp32-level accuracy; train/tf32x3_operands.hpp).
enum class Precision { fp32, tf32, bf16, tf32x3 };
inline constexpr NamedValue<Precision> kPrecisionNames[] = {
    {Precision::fp32, "fp32", "fp32 products"},
    {Precision::tf32, "tf32", "tensor cores on TF32-rounded operands"},
    {Precision::bf16, "bf16", "bf16 operands"},
    {Precision::tf32x3, "tf32x3", "split TF32, three tensor-core products per GEMM (fp32-level accuracy)"}};
constexpr const auto& named_values(Precision) { return kPrecisionNames; }

// Element type of the gradient all-reduce: fp32, or bf16 (cast before the reduction, ncclBfloat16 + ncclAvg, read
// back to fp32 by Adam). Only the CUDA back-end with more than one rank reduces in bf16.
enum class GradDtype { fp32, bf16 };
inline constexpr NamedValue<GradDtype> kGradDtypeNames[] = {{GradDtype::fp32, "fp32"}, {GradDtype::bf16, "bf16"}};
constexpr const auto& named_values(GradDtype) { return kGradDtypeNames; }

// How a run's steps are timed (docs/measurement.md, "Timing"). events: marks bound every phase of every step (CUDA
// events, or the steady clock on the CPU). step: only each step's start and end (every step timed with the fewest
// marks; phases are NaN). none: no mark inside the steps: one pair around the warm-up and one around the measured
// steps, the batch generation timed alone after the run and subtracted (the untimed step; phases NaN). interleaved
// (the command line's default): every fifth run marks every phase as events does, the others are timed as none does:
// throughput and speedup come from the unmarked runs, which each mark would otherwise slow (about 3 us per mark on
// H200), the phase breakdown from the marked ones.
enum class TimingMode { events, step, none, interleaved };
inline constexpr NamedValue<TimingMode> kTimingModeNames[] = {
    {TimingMode::interleaved, "interleaved",
     "throughput from runs without a mark inside their steps, phases from every fifth run, which marks them (--runs "
     "counts the unmarked runs)"},
    {TimingMode::events, "events", "every phase of every step"},
    {TimingMode::step, "step", "each step's start and end only"},
    {TimingMode::none, "none", "no mark inside the steps (the untimed reference)"}};
constexpr const auto& named_values(TimingMode) { return kTimingModeNames; }

// --timing interleaved: the runs that mark phases. Every fifth run (run indices 4, 9, ...), and in a configuration of
// fewer than 5 runs its last one, so that R unmarked runs and max(1, R / 4) marked ones make
// interleaved_run_count(R) runs.
inline bool interleaved_run_marks_phases(int run_index, int total_runs) {
  return (run_index + 1) % 5 == 0 || (total_runs < 5 && run_index == total_runs - 1);
}
// The runs of a configuration that asks for `unmarked_runs` unmarked (throughput) runs with --timing interleaved.
inline int interleaved_run_count(int unmarked_runs) {
  return unmarked_runs + (unmarked_runs < 4 ? 1 : unmarked_runs / 4);
}

// How each GEMM shape's algorithm is chosen (tuned_gemm.hpp): alone = the fastest of its candidates timed alone;
// step = then, among the candidates nearly as fast alone, the ones with which the replayed step is fastest (CUDA
// graphs only; docs/measurement.md, "GEMM tuning"); plan = what an earlier job's plan names (--gemm-plan), untimed.
enum class GemmTuning { alone, step, plan };
inline constexpr NamedValue<GemmTuning> kGemmTuningNames[] = {
    {GemmTuning::step, "step",
     "of each GEMM shape's options nearly as fast alone (within 1.25x), those with which the replayed step is fastest "
     "(CUDA graphs only; else alone)"},
    {GemmTuning::alone, "alone", "the fastest of each shape's candidates timed alone"},
    {GemmTuning::plan, "plan", "", false}};  // --gemm-plan
constexpr const auto& named_values(GemmTuning) { return kGemmTuningNames; }

// When backward forms the weight gradients (--overlap-order):
//  - layerwise: each layer's right after its dL/dZ, last layer first (PyTorch DDP's order). The first layer's, the
//    largest by far in both presets, is then backward's last write, and its reduction cannot overlap anything.
//  - deferred: the chain of input gradients first (every layer's dL/dZ), then the weight gradients from the first
//    layer up. The first layer's is reduced behind the weight-gradient GEMMs of the layers above it, the last bucket is
//    small, and since backward reads no weight after the chain, Adam may update a bucket as soon as it is reduced.
enum class WeightGradientOrder { layerwise, deferred };
inline constexpr NamedValue<WeightGradientOrder> kWeightGradientOrderNames[] = {
    {WeightGradientOrder::deferred, "deferred",
     "input gradients first, then weight gradients first layer up, Adam per bucket as soon as it is reduced"},
    {WeightGradientOrder::layerwise, "layerwise",
     "each layer's weight gradient with its input gradient, last layer first"}};
constexpr const auto& named_values(WeightGradientOrder) { return kWeightGradientOrderNames; }

// With overlap: when Adam updates the reduced gradient (--overlap-update). per-bucket: each bucket as soon as its
// reduction completes (deferred order: on a stream of its own, beside the rest of backward; layerwise: after
// backward, in bucket order). after-last: the whole buffer at once, on the compute stream, once the last bucket is
// reduced: nothing of Adam runs beside backward's GEMMs and NCCL's kernels.
enum class OverlapUpdate { per_bucket, after_last };
inline constexpr NamedValue<OverlapUpdate> kOverlapUpdateNames[] = {
    {OverlapUpdate::per_bucket, "per-bucket", "Adam on each bucket as soon as it is reduced"},
    {OverlapUpdate::after_last, "after-last", "Adam on every parameter once the last bucket is reduced"}};
constexpr const auto& named_values(OverlapUpdate) { return kOverlapUpdateNames; }

// A GEMM plan: what runs each GEMM shape of a configuration's step (--gemm-plan; train/gemm/gemm_plan.hpp reads and
// writes it as text).
struct GemmPlan {
  // Shape, as tuned_gemm names it ("TN m=1024 n=32 k=4800"), to the candidate that ran it ("skinny (32 columns, 8
  // splits, cluster sum)", "cuBLASLt (algorithm 21, tile 18, stages 8, K in 4 parts)"). Empty: tune.
  std::map<std::string, std::string> option_of_shape;
  std::string source;  // where it came from, for messages: "FILE, configuration NAME"

  bool empty() const { return option_of_shape.empty(); }
  bool operator==(const GemmPlan& other) const { return option_of_shape == other.option_of_shape; }
};

// One configuration's training step, resolved (config/resolver.hpp): every setting as the step runs it, nothing left
// on auto. The trainers take it as given.
struct TrainingSettings {
  MlpSpec model;
  int global_batch = 32;  // split evenly: rank r of N trains on samples [r*B/N, (r+1)*B/N) of each global batch
  int warmup_steps = 10;
  int measured_steps = 100;
  std::uint64_t seed = 1;
  AdamSettings adam;
  // --- How the CUDA step is executed (docs/measurement.md, "Step execution"); the CPU fallback refuses the ones it
  // cannot honour (backend.cpp). ---
  Precision precision = Precision::fp32;
  bool graph = true;     // the whole step (NCCL included) captured once and replayed as one CUDA graph
  bool overlap = false;  // gradients reduced in buckets during backward, Adam per reduced bucket
  // Bucket cap in MB (1e6 bytes); the bucket reduced first (layerwise) or last (deferred) closes at 1 MB or less.
  double bucket_mb = 8.0;
  // With overlap: when backward forms the weight gradients (gradient_buckets.hpp); deferred also updates each bucket
  // as soon as it is reduced, beside the rest of backward.
  WeightGradientOrder overlap_order = WeightGradientOrder::deferred;
  OverlapUpdate overlap_update = OverlapUpdate::per_bucket;  // with overlap: when Adam runs
  TimingMode timing = TimingMode::events;
  // The configuration's runs (--timing interleaved: which of them mark phases, interleaved_run_marks_phases).
  int runs = 1;
  GradDtype grad_dtype = GradDtype::fp32;  // of the all-reduce (ranks > 1)
  // --optimizer-sharding (ranks > 1, ZeRO-1): the gradient reduce-scattered, Adam on this rank's 1/N of the
  // parameters, the updated parameters all-gathered; instead of every rank updating all of them.
  bool optimizer_sharding = false;
  // One rank, fp32: the weight gradients are computed inside the optimizer kernel (weight gradient + Adam in one pass
  // over the parameters; the weight gradient is never written to memory). Backward then computes only the input and
  // bias gradients, and the optimizer phase holds the weight gradients (docs/measurement.md, "Step execution").
  bool fused_optimizer = false;
  // Gradient accumulation (docs/measurement.md, "Gradient accumulation"): every step trains one global batch and adds
  // its gradient to the flat buffer; every accumulate_steps-th step (steps K, 2K, ... counting from 1) all-reduces
  // and applies Adam to the mean of the K gradients. 1 = reduce and update every step.
  int accumulate_steps = 1;
  // step: set-up also times the replayed step with each GEMM shape's near-fastest options (needs graph). plan: each
  // shape runs what gemm_plan names.
  GemmTuning gemm_tuning = GemmTuning::alone;
  GemmPlan gemm_plan;
  // The SMs the communicator's kernels may hold (> 1 rank; NCCL's maxCTAs and minCTAs = 1), 0: NCCL's choice. Fewer
  // leave more SMs to the GEMMs of backward that run beside the all-reduce (docs/measurement.md, "Step execution").
  int nccl_max_ctas = 0;
  // With overlap: cuBLASLt's SM count target for backward's GEMMs, which run beside the buckets' all-reduces, so the
  // algorithm chosen is one that fits the SMs left to it; 0: every SM (the library's default choice).
  int overlap_sm_target = 0;

  // Step s (from 0) starts a new accumulation (its gradient overwrites the buffer) / ends one (reduce + Adam).
  bool starts_accumulation(int step) const { return step % accumulate_steps == 0; }
  bool ends_accumulation(int step) const { return step % accumulate_steps == accumulate_steps - 1; }

  int total_steps() const { return warmup_steps + measured_steps; }
  // Whether run `run_index` marks every phase (events), or leaves its steps without a mark (none, and interleaved's
  // unmarked runs). --timing step: neither (each step's start and end only).
  bool marks_phases(int run_index) const {
    return timing == TimingMode::events ||
           (timing == TimingMode::interleaved && interleaved_run_marks_phases(run_index, runs));
  }
  bool marks_nothing(int run_index) const {
    return timing == TimingMode::none ||
           (timing == TimingMode::interleaved && !interleaved_run_marks_phases(run_index, runs));
  }
};

}  // namespace mgpu
