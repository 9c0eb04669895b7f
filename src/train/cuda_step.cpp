// Purpose: the CUDA training step, top to bottom: forward, backward (reducing buckets as they close, or forming the
// weight gradients inside the fused update), the gradient's reduction on the communication stream, and Adam; each
// phase boundary marked where the timeline asks for it. CudaTrainer (cuda_trainer.cpp) builds, captures and replays
// it.
#include "platform/cuda_check.hpp"
#include "train/cuda_trainer.hpp"

namespace mgpu {
namespace {

// The step's marks, by the names enqueue_step records them with (step_timeline.hpp).
constexpr StepTimeline::Mark kStart = StepTimeline::kStart;
constexpr StepTimeline::Mark kForwardEnd = StepTimeline::kForwardEnd;
constexpr StepTimeline::Mark kBackwardEnd = StepTimeline::kBackwardEnd;
constexpr StepTimeline::Mark kAllreduceStart = StepTimeline::kAllreduceStart;
constexpr StepTimeline::Mark kAllreduceEnd = StepTimeline::kAllreduceEnd;
constexpr StepTimeline::Mark kOptimizerStart = StepTimeline::kOptimizerStart;
constexpr StepTimeline::Mark kEnd = StepTimeline::kEnd;

}  // namespace

void CudaTrainer::enqueue_step(const StepEvents* events, StepKind kind) {
  const cudaStream_t compute = compute_stream_.get();
  // Data loading is not part of the step (docs/measurement.md: forward starts with the batch in place). The batch is
  // generated on the compute stream before `start` is recorded, so `start` fires only once it is there.
  enqueue_bookkeeping_and_batch();
  if (persistent_in_use_) return enqueue_persistent_step(events, kind);
  const bool overlap = nccl_ && settings_.overlap && kind.update;
  const StepPlan step{kind, settings_.fused_optimizer && kind.update, overlap,
                      nccl_ && settings_.optimizer_sharding && kind.update,
                      overlap && settings_.overlap_update == OverlapUpdate::after_last};

  mark(events, kStart, compute);
  enqueue_forward(step);
  mark(events, kForwardEnd, compute);  // forward phase = start -> here, loss and dL/dy included
  // backward phase = forward_end -> backward_end: every gradient written (fused: every input and bias gradient; with
  // the output head, all but the output layer's input gradient, which the head wrote in the forward phase).
  if (step.overlap) {
    enqueue_backward_reducing_buckets(events, kind);
  } else if (step.fused) {
    enqueue_backward_for_fused_update(kind);
    mark(events, kBackwardEnd, compute);
  } else {
    model_.backward(plan_, {}, kind.accumulate);
    // A step that only accumulates ends here: its end mark is backward's (a second mark right after it would add
    // the cost of an event-record node, about 3 us on H200, to the step and to no phase).
    mark(events, kind.update ? kBackwardEnd : kEnd, compute);
  }
  // A step that does not end an accumulation only adds its gradient: no reduction, no update (its allreduce,
  // exposed_comm and optimizer phases are 0).
  if (!kind.update) return;
  if (step.sharded) {
    reduce_scatter_gradients(events);
    enqueue_sharded_update(events);
  } else {
    if (nccl_ && !step.overlap) reduce_bucket(0, events);
    enqueue_update(events, step);
  }
  mark(events, kEnd, compute);  // step = start -> here
}

void CudaTrainer::enqueue_forward(const StepPlan& step) {
  if (step.fused && output_head_) {
    // The output layer's forward, the loss and backward's first input gradient in one kernel (CudaMlp::
    // forward_with_output_head): two fewer links in the step's chain of dependent kernels. That input gradient, one
    // small product, is then timed in the forward phase.
    model_.forward_with_output_head(losses_.slots());
    return;
  }
  model_.forward();
  model_.loss_and_gradient(losses_.slots());
}

void CudaTrainer::enqueue_backward_reducing_buckets(const StepEvents* events, StepKind kind) {
  // Each bucket is handed to the communication stream as soon as backward has written its last piece.
  const cudaStream_t compute = compute_stream_.get();
  const int buckets = static_cast<int>(plan_.buckets.size());
  int next_bucket = 0;
  model_.backward(
      plan_,
      [&](int piece) {
        if (plan_.buckets[next_bucket].last_piece != piece) return;
        // The last bucket's last piece is backward's last write: backward_end is marked before that bucket is
        // handed over. Marked after it, an eager launch would stamp it only once the host had launched the NCCL
        // call, possibly after a small bucket's reduction had finished (measured: a negative exposed_comm).
        if (next_bucket + 1 == buckets) mark(events, kBackwardEnd, compute);
        reduce_bucket(next_bucket++, events);
      },
      kind.accumulate);
}

void CudaTrainer::enqueue_backward_for_fused_update(StepKind kind) {
  // Where it pays (CudaMlp::early_updates_pay), every layer above the first is updated as soon as backward is done
  // with its weights, beside the rest of backward (CudaMlp::EarlyUpdate); the first layer's update, which only
  // backward's last kernel makes possible, is then the optimizer phase, with the wait for the early ones.
  CudaMlp::EarlyUpdate early;
  early.adam = settings_.adam;
  early.gradient_scale = gradient_scale();
  early.accumulated = kind.accumulate;
  model_.backward_without_weight_gradients(model_.early_updates_pay() ? &early : nullptr);
}

void CudaTrainer::enqueue_update(const StepEvents* events, const StepPlan& step) {
  // One rank: nothing to reduce, nothing is enqueued or recorded, so the single-GPU baseline carries no cost a real
  // single-GPU run would not have (the optimizer phase starts at backward_end).
  if (step.fused) {
    // optimizer phase = weight gradients + Adam (with accumulation: added to the earlier steps' sum first).
    model_.adam_with_weight_gradients(settings_.adam, gradient_scale(), step.kind.accumulate);
  } else if (!nccl_) {
    model_.adam(settings_.adam, 0, model_.parameter_count(), gradient_scale());
  } else if (step.update_after_last) {
    enqueue_update_after_last_bucket(events);
  } else {
    enqueue_update_per_reduced_bucket(events, step);
  }
}

void CudaTrainer::enqueue_update_per_reduced_bucket(const StepEvents* events, const StepPlan& step) {
  // Adam updates each bucket once its reduction is complete: the updating stream waits for bucket b only (a GPU-side
  // wait), so updating early buckets overlaps reducing later ones. Deferred overlap: backward reads no weight once it
  // hands its first bucket over (CudaMlp::backward), so each bucket is updated on the optimizer stream as soon as it
  // is reduced, beside the weight-gradient GEMMs still running, and the compute stream joins that stream before the
  // step ends. Otherwise the compute stream updates them in turn.
  const bool beside_backward = step.overlap && plan_.order == WeightGradientOrder::deferred;
  CudaStream& updates = beside_backward ? optimizer_stream_ : compute_stream_;
  for (std::size_t b = 0; b < plan_.buckets.size(); ++b) {
    updates.wait(bucket_reduced_[b].get());
    // Recorded on the updating stream after its first wait: the optimizer phase starts when that stream could
    // actually proceed, not when the communication stream finished.
    if (b == 0) mark(events, kOptimizerStart, updates.get());
    const GradientBucket& bucket = plan_.buckets[b];
    model_.adam(settings_.adam, bucket.begin, bucket.end - bucket.begin, gradient_scale(), updates.get());
  }
  if (beside_backward) {
    updates_done_.record(optimizer_stream_.get());
    compute_stream_.wait(updates_done_.get());
  }
}

void CudaTrainer::enqueue_update_after_last_bucket(const StepEvents* events) {
  // --overlap-update after-last: one Adam over every parameter on the compute stream once the last bucket is reduced
  // (the communication stream reduces the buckets in order, so the last one's event follows them all); nothing of
  // Adam runs beside backward's GEMMs and NCCL's kernels.
  const cudaStream_t compute = compute_stream_.get();
  compute_stream_.wait(bucket_reduced_[plan_.buckets.size() - 1].get());
  mark(events, kOptimizerStart, compute);
  model_.adam(settings_.adam, 0, model_.parameter_count(), gradient_scale(), compute);
}

void CudaTrainer::reduce_scatter_gradients(const StepEvents* events) {
  // As reduce_bucket does for the whole buffer, but each rank receives the average of its own shard only (in place:
  // the shard's slot of the flat buffer); the tail, fewer elements than ranks, is all-reduced.
  const cudaStream_t comm = comm_stream_.get();
  gradients_ready_.record(compute_stream_.get());
  comm_stream_.wait(gradients_ready_.get());
  mark(events, kAllreduceStart, comm);
  float* gradients = model_.gradients();
  const std::size_t mine = static_cast<std::size_t>(rank_) * shards_.shard;
  if (shards_.shard > 0) {
    MGPU_NCCL_CHECK(
        ncclReduceScatter(gradients, gradients + mine, shards_.shard, ncclFloat, ncclAvg, nccl_->get(), comm));
  }
  if (shards_.tail > 0) {
    float* tail = gradients + shards_.tail_begin;
    MGPU_NCCL_CHECK(ncclAllReduce(tail, tail, shards_.tail, ncclFloat, ncclAvg, nccl_->get(), comm));
  }
  mark(events, kAllreduceEnd, comm);
  bucket_reduced_[0].record(comm);
}

void CudaTrainer::enqueue_sharded_update(const StepEvents* events) {
  // Adam on this rank's shard (and the tail every rank holds whole), then every rank's updated shard to every rank
  // (in place), before anything reads the parameters again: optimizer phase = the update and the all-gather.
  const cudaStream_t compute = compute_stream_.get();
  const cudaStream_t comm = comm_stream_.get();
  compute_stream_.wait(bucket_reduced_[0].get());
  mark(events, kOptimizerStart, compute);
  const std::size_t mine = static_cast<std::size_t>(rank_) * shards_.shard;
  if (shards_.shard > 0) model_.adam(settings_.adam, mine, shards_.shard, gradient_scale(), compute);
  if (shards_.tail > 0) model_.adam(settings_.adam, shards_.tail_begin, shards_.tail, gradient_scale(), compute);
  shard_updated_.record(compute);
  comm_stream_.wait(shard_updated_.get());
  float* parameters = model_.parameters();
  if (shards_.shard > 0)
    MGPU_NCCL_CHECK(ncclAllGather(parameters + mine, parameters, shards_.shard, ncclFloat, nccl_->get(), comm));
  parameters_gathered_.record(comm);
  compute_stream_.wait(parameters_gathered_.get());
}

void CudaTrainer::enqueue_bookkeeping_and_batch() {
  // The step's values (index, first sample, Adam corrections) are advanced in device memory, so a replay of the same
  // captured work trains step s + 1 after step s. Rank r's slice of global batch s starts at s*B + r*B/N: the same
  // samples whatever the number of ranks.
  model_.advance_step(settings_.global_batch, static_cast<std::uint64_t>(rank_) * local_batch_, settings_.adam,
                      settings_.accumulate_steps);
  model_.generate_batch();
}

void CudaTrainer::reduce_bucket(int bucket, const StepEvents* events) {
  const cudaStream_t comm = comm_stream_.get();
  const GradientBucket& range = plan_.buckets[bucket];
  // The communication stream starts a bucket only once the compute stream has written it (a GPU-side wait, no host
  // involvement). allreduce_start is recorded after the first such wait, so the allreduce phase runs from the first
  // reduction's launch to the last one's completion, including any time NCCL waits for a slower rank and, with
  // overlap, the gaps in which the next bucket is still being computed.
  gradients_ready_.record(compute_stream_.get());
  comm_stream_.wait(gradients_ready_.get());
  if (bucket == 0) mark(events, kAllreduceStart, comm);
  // In-place average: each rank's gradient is the mean over its local batch, so their average is the gradient of the
  // mean over the global batch, as on one GPU. Buckets are contiguous ranges of the one flat gradient buffer.
  const std::size_t count = range.end - range.begin;
  if (settings_.grad_dtype == GradDtype::bf16) {
    // --grad-dtype bf16: the bucket is rounded to bf16 on the communication stream (part of the allreduce phase),
    // averaged by NCCL in bf16 (half the bytes on the wire), and Adam widens it back to fp32 as it reads it.
    model_.cast_gradients_to_bf16(range.begin, count, comm);
    __nv_bfloat16* first = model_.reduced_gradients_bf16() + range.begin;
    MGPU_NCCL_CHECK(ncclAllReduce(first, first, count, ncclBfloat16, ncclAvg, nccl_->get(), comm));
  } else {
    float* first = model_.gradients() + range.begin;
    MGPU_NCCL_CHECK(ncclAllReduce(first, first, count, ncclFloat, ncclAvg, nccl_->get(), comm));
  }
  if (bucket + 1 == static_cast<int>(plan_.buckets.size())) mark(events, kAllreduceEnd, comm);
  bucket_reduced_[bucket].record(comm);
}

}  // namespace mgpu
