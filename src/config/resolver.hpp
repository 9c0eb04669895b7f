// Purpose: the one resolver: every "auto" of the step options, and what each back-end can honour, decided once per
// configuration from the request, the back-end and the GPU count. mgpu_bench's sweep and predict's default step both
// read it.
#pragma once

#include "config/step_request.hpp"
#include "config/step_settings.hpp"

namespace mgpu {

// The fused optimizer (weight gradients computed inside Adam) by default: one GPU, fp32, a local batch of at most
// kFusedOptimizerMostLocalBatch and a weight-gradient work of at most kFusedOptimizerMostWeightSamples (dense weights x
// local batch): medium up to a local batch of 1,024, large up to 290. The work bounds a large model, whose
// weight-gradient GEMMs reach their full rate once the batch is large; the batch bounds a small one, whose tiles the
// fused kernel splits over a cluster, a sum that grows with the batch while the GEMMs it replaces stay short. Measured
// fused against unfused per cell by bench/fused_wide_check.sh (PART=fused): on one H100, medium 2,048 lost by 5%.
inline constexpr long long kFusedOptimizerMostWeightSamples = 2'000'000'000;
inline constexpr long long kFusedOptimizerMostLocalBatch = 1024;
bool fused_optimizer_by_default(int gpus, bool fp32, long long local_batch, long long dense_weights);

// Bucketed overlap (deferred order) by default: 4 GPUs or more and a local batch of at least kOverlapMinLocalBatch,
// where it made the step 2.0-2.5% shorter on 4 x H200; on 2 GPUs it gained nothing beyond the spread between
// processes (docs/measurement.md, "Defaults").
inline constexpr int kOverlapMinGpus = 4;
inline constexpr long long kOverlapMinLocalBatch = 1024;
bool overlap_by_default(int gpus, long long local_batch);

// Fills every step setting of `settings` from `request` for a configuration of `gpus` ranks on the chosen back-end;
// settings.global_batch must be set (the local batch decides the autos). Rules: graph on where the back-end is CUDA;
// overlap, the sharded optimizer and a bf16 reduction only with more than one GPU, the fused optimizer only with one
// and fp32; auto as overlap_by_default and fused_optimizer_by_default say (overlap only in the measured deferred
// order, never with the sharded optimizer); step-level GEMM tuning only where the step is a graph; the persistent
// step kernel (asked for, or auto where the step is a graph) only with one GPU, fp32 and no accumulation. Throws
// UsageError (one line naming the option) for what the CPU fallback cannot honour (--graph on, --overlap on,
// --fuse-optimizer on, --precision tf32/bf16, --grad-dtype bf16, --optimizer-sharding on, --step-kernel other than
// auto) and for combinations no back-end runs (--fuse-optimizer on or --step-kernel persistent with a precision other
// than fp32, --step-kernel persistent with accumulation, --optimizer-sharding on with --overlap on or a bf16
// reduction).
void resolve_step(const StepRequest& request, bool cuda_backend, int gpus, TrainingSettings& settings);

// Checks that the request can be honoured on some back-end, before the back-end is known (the command line's own
// check): the combinations resolve_step refuses on every back-end.
void check_step_request(const StepRequest& request);

// --gemm-plan: the configuration runs `plan` instead of tuning (CUDA only; the CPU fallback tunes nothing).
void adopt_gemm_plan(TrainingSettings& settings, const GemmPlan& plan, bool cuda_backend);

}  // namespace mgpu
