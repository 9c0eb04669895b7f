// Purpose: CudaTrainer: one data-parallel training run on this rank's GPU (each step one CUDA graph replay, or
// launched eagerly with --graph off), the gradient all-reduce in buckets on its own stream, and the phase times of
// docs/measurement.md read from CUDA events once the run is over.
#include "train/cuda_trainer.hpp"

#include <algorithm>
#include <cstdio>

#include "comm/startup_deadline.hpp"
#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"
#include "platform/error.hpp"
#include "platform/mpi_check.hpp"
#include "platform/profiled_range.hpp"
#include "train/cuda_reference_step.hpp"
#include "train/gemm/step_gemm_search.hpp"
#include "train/math_check.hpp"
#include "train/run_harness.hpp"

namespace mgpu {
namespace {

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

std::unique_ptr<NcclCommunicator> make_communicator(MPI_Comm comm, int world_size, int device_ordinal, int max_ctas) {
  if (world_size == 1) return nullptr;  // nothing to reduce; see enqueue_step
  return std::make_unique<NcclCommunicator>(comm, device_ordinal, max_ctas);
}

// --overlap-sm-target names SMs this GPU has (`sms`).
int checked_sm_target(const TrainingSettings& settings, int sms) {
  if (!settings.overlap || settings.overlap_sm_target == 0) return 0;
  if (settings.overlap_sm_target > sms)
    throw UsageError("--overlap-sm-target " + std::to_string(settings.overlap_sm_target) + ": this GPU has " +
                     std::to_string(sms) + " SMs");
  return settings.overlap_sm_target;
}

}  // namespace

CudaTrainer::CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal, GemmTunings* gemm_tunings)
    : settings_(settings),
      rank_(comm_rank(comm)),
      world_size_(comm_size(comm)),
      local_batch_(checked_local_batch(settings, world_size_)),
      device_ordinal_(select_device(device_ordinal)),
      nccl_(make_communicator(comm, world_size_, device_ordinal_, settings.nccl_max_ctas)),
      // One rank reduces nothing: --grad-dtype does not apply.
      model_(settings.model, local_batch_, compute_stream_.get(), settings.precision,
             world_size_ > 1 ? settings.grad_dtype : GradDtype::fp32, GemmSelection::tuned, gemm_tunings),
      plan_(bucket_plan_for(settings, world_size_)),
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
  model_.set_backward_sm_count_target(checked_sm_target(settings_, model_.gemm().multiprocessors()));
  model_.initialize(settings_.seed, 0);
  set_up_persistent_step();
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
  // The chain's steps above run whatever --step-kernel says: its GEMMs are tuned and recorded in every CUDA
  // configuration, and auto can time it. Then the persistent kernel's first launch, before any capture.
  warm_up_persistent_step();
  // Bounded: the warm-up steps hold the first all-reduces, which never end when a peer stalled in its own set-up.
  wait_bounded_for_streams("the warm-up steps of set-up on the GPU");
  if (settings_.graph) capture_step_graphs(kinds_seen_by);
  if (settings_.graph && settings_.gemm_tuning == GemmTuning::step) {
    const std::string found = tune_step_gemms(kinds_seen_by);
    if (rank_ == 0 && gemm_report_enabled()) std::fprintf(stderr, "%s", found.c_str());
  }
  settle_step_kernel(kinds_seen_by);
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
  // Fresh parameters each time: thousands of tuning steps from one initialisation could drift anywhere.
  model_.initialize(settings_.seed, 0);
  // The graphs the throughput is measured with: the unmarked ones where runs without marks exist.
  const std::array<CapturedStep, kStepKinds>& graphs =
      step_graphs(settings_.timing == TimingMode::events || settings_.timing == TimingMode::step);
  const cudaStream_t compute = compute_stream_.get();
  return slowest_replay_ms(
      compute,
      [&](int count) {
        for (int step = 0; step < count; ++step) graphs[kind_of(step).index()].graph.launch(compute, 0);
      },
      // Bounded: the replayed steps hold the all-reduce, which never ends when a peer stalled in its own set-up.
      [&](const CudaEvent& event) { wait_bounded_for(event, "the step replays of GEMM tuning on the GPU"); }, comm_);
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
  stall_run_if_asked(run_index, compute);

  // The whole run is enqueued without a single host synchronisation: a host wait between steps would idle the GPU
  // and put host latency into the step times. The host blocks at most when the launch queue is full, which does not
  // change what the events measure. A run without marks inside its steps (--timing none, interleaved's unmarked runs)
  // has only the run marks, outside the steps, and then times the batch generation alone.
  const bool marked = !settings_.marks_nothing(run_index);
  if (!marked) timeline_.mark_run(StepTimeline::kRunStart, compute);
  {
    // A profiler that starts with profiling off sees the runs' steps alone, not the set-up's tuning and clock
    // settling (bench/step_kernels.sh).
    const ProfiledRange profiled;
    enqueue_run_steps(steps, marked);
  }
  int generations = 0;
  if (!marked) {
    timeline_.mark_run(StepTimeline::kRunEnd, compute);
    generations = enqueue_generation_alone();
  }

  // The last event on the compute stream completes after everything of the run: the compute stream waited for every
  // all-reduce before its optimizer.
  wait_sampling_clocks(timeline_.last_event(marked), clock_sampler_, nccl_.get(),
                       [this] { return timeline_.first_unfinished_step(); });
  record.measured_wall_ms = timeline_.measured_wall_ms(marked);
  record.phases_marked = settings_.marks_phases(run_index);
  if (!marked) record.batch_generation_ms = timeline_.generation_alone_ms(generations);
  timeline_.read_phase_times(record, marked, nccl_ != nullptr);

  const std::vector<float> losses = losses_.read(compute, "run " + std::to_string(run_index));
  record.loss.assign(losses.begin(), losses.end());
  record_run_conditions(record, clock_sampler_);
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
