// Purpose: CudaTrainer: one data-parallel training run on this rank's GPU (each step one CUDA graph replay, or
// launched eagerly with --graph off), the gradient all-reduce in buckets on its own stream, and the phase times of
// docs/measurement.md read from CUDA events once the run is over.
#include "train/cuda_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

#include "comm/startup_deadline.hpp"
#include "comm/watchdog.hpp"
#include "kernels/fault_injection.cuh"
#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"
#include "train/cuda_reference_step.hpp"
#include "train/gemm/step_gemm_search.hpp"
#include "train/math_check.hpp"

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

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  MGPU_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  MGPU_MPI_CHECK(MPI_Comm_size(comm, &size));
  return size;
}

int checked_local_batch(const TrainingSettings& settings, int world_size) {
  MGPU_REQUIRE(settings.global_batch > 0 && settings.global_batch % world_size == 0,
               "global batch " + std::to_string(settings.global_batch) + " is not divisible by " +
                   std::to_string(world_size) + " ranks");
  MGPU_REQUIRE(settings.total_steps() > 0, "a run needs at least one step");
  return settings.global_batch / world_size;
}

// Returns `ordinal` once it is the current device, so that members initialised after it live on that device.
int select_device(int ordinal) {
  MGPU_CUDA_CHECK(cudaSetDevice(ordinal));
  return ordinal;
}

std::unique_ptr<NcclCommunicator> make_communicator(MPI_Comm comm, int world_size, int device_ordinal) {
  if (world_size == 1) return nullptr;  // nothing to reduce; see enqueue_step
  return std::make_unique<NcclCommunicator>(comm, device_ordinal);
}

BucketPlan make_bucket_plan(const TrainingSettings& settings, int world_size) {
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

}  // namespace

CudaTrainer::CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal)
    : settings_(settings),
      rank_(comm_rank(comm)),
      world_size_(comm_size(comm)),
      local_batch_(checked_local_batch(settings, world_size_)),
      device_ordinal_(select_device(device_ordinal)),
      nccl_(make_communicator(comm, world_size_, device_ordinal_)),
      // One rank reduces nothing: --grad-dtype does not apply.
      model_(settings.model, local_batch_, compute_stream_.get(), settings.precision,
             world_size_ > 1 ? settings.grad_dtype : GradDtype::fp32),
      plan_(make_bucket_plan(settings, world_size_)),
      comm_(comm),
      output_head_(settings.fused_optimizer && model_.output_head_fusable() && kernels::output_head_enabled()),
      losses_(settings.total_steps(), compute_stream_.get()),
      timeline_(settings_),
      clock_sampler_(describe_gpu(device_ordinal_).pci_bus_id) {
  for (std::size_t b = 0; b < plan_.buckets.size(); ++b) bucket_reduced_.emplace_back(cudaEventDisableTiming);
  // The resolver (config/resolver.hpp) gives the sharded optimizer overlap off and an fp32 reduction, and the fused
  // optimizer one rank and fp32: the trainer takes its settings as given.
  if (settings_.optimizer_sharding && nccl_) {
    shards_.shard = model_.parameter_count() / static_cast<std::size_t>(world_size_);
    shards_.tail_begin = shards_.shard * static_cast<std::size_t>(world_size_);
    shards_.tail = model_.parameter_count() - shards_.tail_begin;
  }
  // Eager steps first, from a valid state, graph or not: every GEMM shape is tuned (tuned_gemm.hpp), cuBLAS and our
  // kernels are loaded and NCCL sets up its connections, none of which may happen inside a capture or a timed run.
  // Every run re-initialises, so these steps leave nothing behind that a run could see. The first is a full one
  // (overwrite, reduce, update) whatever --accumulate says, so NCCL is set up too; then one of every other kind the run
  // uses: with the fused optimizer a step that only accumulates forms its weight gradients with GEMMs that an
  // updating step never runs (found by a test: their shapes were first seen while capturing, which is refused).
  startup_deadline::begin("the step's set-up (warm-up steps, graph capture, GEMM tuning)");
  // Before the first product: each shape runs the plan's choice instead of a tuned one (--gemm-plan).
  if (settings_.gemm_tuning == GemmTuning::plan) model_.gemm().follow_plan(settings_.gemm_plan);
  model_.initialize(settings_.seed, 0);
  // The kinds of the first 2K steps are every kind the run uses.
  const int kinds_seen_by = std::min(settings_.total_steps(), 2 * settings_.accumulate_steps);
  bool warmed[kStepKinds] = {};
  const auto warm_up = [&](StepKind kind) {
    if (warmed[kind.index()]) return;
    warmed[kind.index()] = true;
    enqueue_step(timeline_.step_events(0), kind);
  };
  warm_up(StepKind{});
  for (int step = 0; step < kinds_seen_by; ++step) warm_up(kind_of(step));
  // Bounded: the warm-up steps hold the first all-reduces, which never end when a peer stalled in its own set-up.
  wait_bounded_for_streams("the warm-up steps of set-up on the GPU");
  if (settings_.graph) capture_step_graphs(kinds_seen_by);
  if (settings_.graph && settings_.gemm_tuning == GemmTuning::step) {
    const std::string found = tune_step_gemms(kinds_seen_by);
    if (rank_ == 0 && gemm_report_enabled()) std::fprintf(stderr, "%s", found.c_str());
  }
  wait_bounded_for_streams("the end of set-up on the GPU");  // set-up work done before the first run is timed
  losses_.check_guard(compute_stream_.get(), "set-up: warm-up steps, graph capture and GEMM tuning");
}

void CudaTrainer::capture_step_graphs(int steps) {
  const bool some_run_marks = settings_.timing != TimingMode::none;
  const bool some_run_unmarked = settings_.timing == TimingMode::none || settings_.timing == TimingMode::interleaved;
  bool captured[kStepKinds] = {};
  for (int step = 0; step < steps; ++step) {
    const StepKind kind = kind_of(step);
    if (captured[kind.index()]) continue;
    captured[kind.index()] = true;
    if (some_run_marks) capture_step_graph(kind, true);
    if (some_run_unmarked) capture_step_graph(kind, false);
  }
  if (some_run_unmarked) {
    generation_graph_.capture(compute_stream_.get(), [this] {
      for (int i = 0; i < kGenerationsPerReplay; ++i) enqueue_bookkeeping_and_batch();
    });
  }
}

int CudaTrainer::enqueue_generation_alone() {
  const cudaStream_t compute = compute_stream_.get();
  // As many as the measured steps (at least one graph's worth), so that the per-step figure is an average like the
  // step time it is subtracted from.
  const int replays = std::max(1, (settings_.measured_steps + kGenerationsPerReplay - 1) / kGenerationsPerReplay);
  timeline_.time_generation_alone(compute, [&] {
    for (int r = 0; r < replays; ++r) {
      if (settings_.graph) {
        generation_graph_.launch(compute);
        continue;
      }
      for (int i = 0; i < kGenerationsPerReplay; ++i) enqueue_bookkeeping_and_batch();
    }
  });
  return replays * kGenerationsPerReplay;
}

double CudaTrainer::time_step_replays() {
  // Enough steps per repeat that the two events' resolution (0.5 us) and the first replay's start are small beside
  // the span; the lowest of the repeats, as the GPU's clocks and the L2's contents settle over the first.
  constexpr int kWarmSteps = 5;
  constexpr int kTimedSteps = 20;
  constexpr int kRepeats = 3;
  const cudaStream_t compute = compute_stream_.get();
  // Fresh parameters each time: thousands of tuning steps from one initialisation could drift anywhere.
  model_.initialize(settings_.seed, 0);
  // The graphs the throughput is measured with: the unmarked ones where runs without marks exist.
  const std::array<CapturedStep, kStepKinds>& graphs =
      step_graphs(settings_.timing == TimingMode::events || settings_.timing == TimingMode::step);
  const auto replay = [&](int count) {
    for (int step = 0; step < count; ++step) graphs[kind_of(step).index()].graph.launch(compute, 0);
  };
  replay(kWarmSteps);
  CudaEvent start;
  CudaEvent stop;
  double best = std::numeric_limits<double>::infinity();
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    start.record(compute);
    replay(kTimedSteps);
    stop.record(compute);
    // Bounded: the replayed steps hold the all-reduce, which never ends when a peer stalled in its own set-up.
    wait_bounded_for(stop, "the step replays of GEMM tuning on the GPU");
    best = std::min(best, elapsed_ms(start, stop) / kTimedSteps);
  }
  // A distributed step is as slow as its slowest rank (docs/measurement.md); every rank then decides alike.
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, &best, 1, MPI_DOUBLE, MPI_MAX, comm_, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's step replay time of GEMM tuning (MPI_Iallreduce)"));
  return best;
}

std::string CudaTrainer::gemm_choices() const { return model_.gemm().choices_text(); }

std::string CudaTrainer::tune_step_gemms(int steps_seen) {
  return search_step_gemms(
      model_.gemm(), comm_, [&] { capture_step_graphs(steps_seen); }, [&] { return time_step_replays(); });
}

CudaTrainer::~CudaTrainer() = default;

void CudaTrainer::capture_step_graph(StepKind kind, bool marked) {
  CapturedStep& captured = step_graphs(marked)[kind.index()];
  captured.event_nodes.clear();
  captured.launches = 0;
  // The step is captured once, with step 0's events; run() re-targets the event nodes to each step's own events
  // before its launch (cudaGraphExecEventRecordNodeSetEvent changes only later launches, never one in flight).
  const cudaStream_t compute = compute_stream_.get();
  CudaGraph::capture_begin(compute);
  timeline_.set_capturing(true);
  try {
    enqueue_step(marked ? timeline_.step_events(0) : nullptr, kind);
  } catch (...) {
    timeline_.set_capturing(false);
    CudaGraph::capture_abandon(compute);
    throw;
  }
  timeline_.set_capturing(false);
  // Several instances when events are re-targeted: re-targeting an instance while its previous launch is still queued
  // may make the host wait for that launch, and with a single instance that wait would leave the GPU idle between
  // steps (suspected cause of the 6-16 % wall-time cost of --timing events measured on H200 with one instance).
  // With kGraphCopies instances used in turn, the host waits at most for the step kGraphCopies back. With NCCL too:
  // NCCL's CUDA-graph rules (user guide, "Using NCCL with CUDA Graphs") make a launch of a graph holding a captured
  // collective collective over the ranks of the capture, each rank launching a graph derived from that capture. Every
  // instance here is derived from the one collective capture, every rank launches the same instance sequence
  // (run() picks instance = launches % copies, identical on all ranks), and all launches are ordered on one stream,
  // so no two instances ever run concurrently (concurrent replays on one communicator are what NCCL does not allow).
  captured.graph.capture_end(compute, marked ? kGraphCopies : 1);

  if (marked) captured.event_nodes = timeline_.event_nodes(captured.graph.graph());
  const int marks_recorded = timeline_.marks_per_step(marked, {kind.update, nccl_ != nullptr});
  MGPU_REQUIRE(static_cast<int>(captured.event_nodes.size()) == marks_recorded,
               "the captured step has " + std::to_string(captured.event_nodes.size()) +
                   " timing event nodes, expected " + std::to_string(marks_recorded));
}

RunRecord CudaTrainer::run(int run_index) {
  ScopedDevice device(device_ordinal_);
  const int steps = settings_.total_steps();
  RunRecord record(steps);
  const cudaStream_t compute = compute_stream_.get();

  // Fresh parameters, zero Adam moments and the step counter at 0, enqueued ahead of the first step (its start
  // event comes after them).
  model_.initialize(settings_.seed, static_cast<std::uint64_t>(run_index));

  clock_sampler_.reset();
  // Fault injection (docs/reliability.md): MGPU_FAULT_SPIN_KERNEL_RUN=R makes run R's first step wait behind a kernel
  // that never ends, so the tests can see the watchdog catch a rank blocked in a CUDA wait. Read only when set.
  if (fault_hook_number("MGPU_FAULT_SPIN_KERNEL_RUN") == run_index)
    fault_injection::launch_never_ending_kernel(compute);

  // The whole run is enqueued without a single host synchronisation: a host wait between steps would idle the GPU
  // and put host latency into the step times. The host blocks at most when the launch queue is full, which does not
  // change what the events measure. A run without marks inside its steps (--timing none, interleaved's unmarked runs)
  // has only the run marks, outside the steps, and then times the batch generation alone.
  const bool marked = !settings_.marks_nothing(run_index);
  if (!marked) timeline_.mark_run(StepTimeline::kRunStart, compute);
  enqueue_run_steps(steps, marked);
  int generations = 0;
  if (!marked) {
    timeline_.mark_run(StepTimeline::kRunEnd, compute);
    generations = enqueue_generation_alone();
  }

  wait_sampling_clocks(timeline_.last_event(marked));
  record.measured_wall_ms = timeline_.measured_wall_ms(marked);
  record.phases_marked = settings_.marks_phases(run_index);
  if (!marked) record.batch_generation_ms = timeline_.generation_alone_ms(generations);
  timeline_.read_phase_times(record, marked, nccl_ != nullptr);

  const std::vector<float> losses = losses_.read(compute, "run " + std::to_string(run_index));
  record.loss.assign(losses.begin(), losses.end());
  // Device memory in use now: includes the CUDA context, cuBLAS's workspace and NCCL's buffers. Nothing is freed
  // during a run, so this is also its peak.
  std::size_t free_bytes = 0, total_bytes = 0;
  MGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  record.memory_peak_bytes = static_cast<double>(total_bytes - free_bytes);
  record.sm_clock_mhz = clock_sampler_.mean_sm_mhz();
  record.memory_clock_mhz = clock_sampler_.mean_memory_mhz();
  record.clock_samples = clock_sampler_.samples();
  return record;
}

void CudaTrainer::enqueue_run_steps(int steps, bool marked) {
  const cudaStream_t compute = compute_stream_.get();
  std::array<CapturedStep, kStepKinds>& graphs = step_graphs(marked);
  for (int step = 0; step < steps; ++step) {
    if (!marked && step == settings_.warmup_steps) timeline_.mark_run(StepTimeline::kMeasuredStart, compute);
    const StepKind kind = kind_of(step);
    if (settings_.graph) {
      CapturedStep& captured = graphs[kind.index()];
      const int instance = captured.launches++ % captured.graph.copies();
      if (marked) timeline_.retarget(captured.graph.exec(instance), captured.event_nodes, step);
      // The step counter in device memory tells the replay which step it is.
      captured.graph.launch(compute, instance);
    } else {
      enqueue_step(marked ? timeline_.step_events(step) : nullptr, kind);
    }
  }
}

std::vector<float> CudaTrainer::parameters_after_steps(int steps) {
  require_steps_of_a_run(settings_, steps);
  ScopedDevice device(device_ordinal_);
  model_.initialize(settings_.seed, 0);
  // As run 0 replays its steps: the same graphs (or eager steps), marked or not.
  enqueue_run_steps(steps, !settings_.marks_nothing(0));
  CudaEvent done{cudaEventDisableTiming};
  done.record(compute_stream_.get());
  wait_bounded_for(done, "the math check's steps on the GPU");
  return model_.download_parameters();
}

Trainer::ReferenceRun CudaTrainer::reference_run(int steps) const {
  ScopedDevice device(device_ordinal_);
  const CudaReferenceRun run = cuda_reference_run(settings_, steps);
  return {{run.initial.begin(), run.initial.end()}, {run.trained.begin(), run.trained.end()}};
}

int CudaTrainer::gemm_candidates_checked() const { return model_.gemm().candidates_checked(); }

int CudaTrainer::gemm_candidates_rejected() const { return model_.gemm().candidates_rejected(); }

double CudaTrainer::gemm_verification_seconds() const { return model_.gemm().verification_seconds(); }

void CudaTrainer::enqueue_step(const StepEvents* events, StepKind kind) {
  const cudaStream_t compute = compute_stream_.get();
  // Data loading is not part of the step (docs/measurement.md: forward starts with the batch in place). The batch is
  // generated on the compute stream before `start` is recorded, so `start` fires only once it is there.
  enqueue_bookkeeping_and_batch();
  const StepPlan step{kind, settings_.fused_optimizer && kind.update, nccl_ && settings_.overlap && kind.update,
                      nccl_ && settings_.optimizer_sharding && kind.update};

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
    // the cost of an event-record node, about 3 us, to the step and to no phase).
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
        // call, possibly after a small bucket's reduction had finished (measured: exposed_comm -2.8 us).
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

void CudaTrainer::wait_sampling_clocks(const CudaEvent& last) {
  // Poll instead of blocking in cudaEventSynchronize, so the clocks can be sampled while the GPU works. The last
  // step's end event on the compute stream completes after everything of the run: the compute stream waited for
  // every all-reduce before its optimizer. At least one reading is taken, while the GPU still works on the run or
  // right after (clocks fall only after idle time); a reading taken before the run was enqueued could catch an idle
  // clock and flag a run as throttled that was not.
  // Bounded (watchdog.hpp): a kernel that never ends or an all-reduce whose peer is gone stops the job with the step
  // it was in, instead of holding this rank forever. NCCL's asynchronous errors (a peer's failure seen by the
  // network) surface here too, since nothing else would wake this loop.
  BoundedWait wait(nccl_ ? "the run's steps on the GPU (CUDA events; NCCL all-reduce)"
                         : "the run's steps on the GPU (CUDA events)");
  wait.set_step_source([this] { return timeline_.first_unfinished_step(); });
  for (;;) {
    clock_sampler_.sample();
    if (last.query()) break;
    if (nccl_) nccl_->check_async_error();
    wait.check();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void CudaTrainer::wait_bounded_for(const CudaEvent& event, const std::string& waiting_for) const {
  mgpu::wait_bounded_for(event, nccl_.get(), waiting_for);
}

void CudaTrainer::wait_bounded_for_streams(const std::string& waiting_for) const {
  const CudaEvent compute_done(cudaEventDisableTiming);
  const CudaEvent comm_done(cudaEventDisableTiming);
  compute_done.record(compute_stream_.get());
  comm_done.record(comm_stream_.get());
  wait_bounded_for(compute_done, waiting_for);
  wait_bounded_for(comm_done, waiting_for);
}

std::vector<float> CudaTrainer::parameters() const {
  ScopedDevice device(device_ordinal_);
  return model_.download_parameters();
}

}  // namespace mgpu
