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

#include "comm/watchdog.hpp"
#include "kernels/fault_injection.cuh"
#include "kernels/output_head.cuh"
#include "platform/cuda_check.hpp"
#include "platform/mpi_check.hpp"
#include "train/coordinate_search.hpp"
#include "train/cuda_reference_step.hpp"
#include "train/math_check.hpp"

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
      events_(settings.timing != TimingMode::none ? static_cast<std::size_t>(settings.total_steps()) : 0),
      clock_sampler_(describe_gpu(device_ordinal_).pci_bus_id) {
  for (std::size_t b = 0; b < plan_.buckets.size(); ++b) bucket_reduced_.emplace_back(cudaEventDisableTiming);
  // Eager steps first, from a valid state, graph or not: every GEMM shape is tuned (tuned_gemm.hpp), cuBLAS and our
  // kernels are loaded and NCCL sets up its connections, none of which may happen inside a capture or a timed run.
  // Every run re-initialises, so these steps leave nothing behind that a run could see. The first is a full one
  // (overwrite, reduce, update) whatever --accumulate says, so NCCL is set up too; then one of every other kind the run
  // uses: with the fused optimizer a step that only accumulates forms its weight gradients with GEMMs that an
  // updating step never runs (found by a test: their shapes were first seen while capturing, which is refused).
  MGPU_REQUIRE(settings_.accumulate_steps >= 1, "--accumulate must be at least 1");
  // The fused optimizer forms the weight gradient where Adam applies it: nothing in between could all-reduce it.
  MGPU_REQUIRE(!settings_.fused_optimizer || (world_size_ == 1 && settings_.precision == Precision::fp32),
               "the fused optimizer needs one rank and fp32 (" + std::to_string(world_size_) + " ranks, " +
                   precision_name(settings_.precision) + ")");
  // Before the first product: each shape runs the plan's choice instead of a tuned one (--gemm-plan).
  if (settings_.gemm_tuning == GemmTuning::plan) model_.gemm().follow_plan(settings_.gemm_plan);
  model_.initialize(settings_.seed, 0);
  // The kinds of the first 2K steps are every kind the run uses.
  const int kinds_seen_by = std::min(settings_.total_steps(), 2 * settings_.accumulate_steps);
  bool warmed[kStepKinds] = {};
  const auto warm_up = [&](StepKind kind) {
    if (warmed[kind.index()]) return;
    warmed[kind.index()] = true;
    enqueue_step(events_.empty() ? nullptr : &events_.front(), kind);
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
  for (std::array<CudaEvent, 2>& window : generation_marks_) {
    window[0].record(compute);
    for (int r = 0; r < replays; ++r) {
      if (settings_.graph) {
        generation_graph_.launch(compute);
        continue;
      }
      for (int i = 0; i < kGenerationsPerReplay; ++i) enqueue_bookkeeping_and_batch();
    }
    window[1].record(compute);
  }
  return replays * kGenerationsPerReplay;
}

double CudaTrainer::generation_alone_ms(int generations_per_window) const {
  double fastest = std::numeric_limits<double>::infinity();
  for (const std::array<CudaEvent, 2>& window : generation_marks_)
    fastest = std::min(fastest, elapsed_ms(window[0], window[1]));
  return fastest / generations_per_window;
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

std::string CudaTrainer::gemm_choices() const {
  std::string lines;
  for (const TunedGemm::ShapeOptions& shape : model_.gemm().shape_options()) {
    char alone[64];
    std::snprintf(alone, sizeof alone, " (%.2f us alone", shape.alone_us[shape.selected]);
    lines += "gemm " + shape.shape + ": " + shape.options[shape.selected] + alone;
    if (shape.selected != 0) {
      std::snprintf(alone, sizeof alone, "; the choice made alone, %.2f us, was ", shape.alone_us[0]);
      lines += alone + shape.options[0];
    }
    lines += "; " + std::to_string(shape.checked) + " candidates verified";
    if (!shape.rejected.empty()) lines += ", rejected: " + shape.rejected.front();
    if (shape.rejected.size() > 1) lines += " and " + std::to_string(shape.rejected.size() - 1) + " more";
    lines += ")\n";
  }
  return lines;
}

std::string CudaTrainer::tune_step_gemms(int steps_seen) {
  // Why: each GEMM shape was tuned alone, by back-to-back calls, but in the step a kernel's neighbours change what is
  // fastest (a block that takes a whole SM keeps the next kernel's blocks from starting beside it; a cluster's blocks
  // must find room in one GPC). Measured on H200: options within 2% of each other alone made large batch 32's step
  // 0.124 or 0.132 ms. So the options nearly as fast alone are tried in the replayed step, one shape at a time in
  // TunedGemm::shape_options order (coordinate_search.hpp), each kept only when the step gets faster by more than
  // the margin, in the pass and again in the final check. Smaller differences are ties that keep the choices made
  // alone (themselves broken by a fixed order, candidate_ranking.hpp), so that independent processes on one machine
  // run the same plan; a 1% margin still takes the step-level effect that made this search worth having.
  constexpr double kMargin = 0.01;
  constexpr int kCheckRounds = 3;
  TunedGemm& gemm = model_.gemm();
  const std::vector<TunedGemm::ShapeOptions> shapes = gemm.shape_options();
  // Every search starts from the choices made alone (an earlier trainer of this process may have changed a shape's).
  std::vector<int> counts;
  bool recapture = false;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    counts.push_back(static_cast<int>(shapes[s].options.size()));
    if (shapes[s].selected != 0) {
      gemm.select(s, 0);
      recapture = true;
    }
  }
  const std::vector<int> start(shapes.size(), 0);
  // With several ranks every one replays the same steps (each holds collectives) and takes the same decisions: the
  // same shapes (the same local batch) and, per shape, the fewest options any rank has (each rank its own options,
  // its choice made alone first), judged by the slowest rank's time.
  int shape_count[2] = {static_cast<int>(shapes.size()), -static_cast<int>(shapes.size())};
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, shape_count, 2, MPI_INT, MPI_MIN, comm_, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's GEMM shapes for step-level tuning (MPI_Iallreduce)"));
  MGPU_REQUIRE(shape_count[0] == -shape_count[1],
               "step-level GEMM tuning: the ranks ran different numbers of GEMM "
               "shapes (" +
                   std::to_string(shape_count[0]) + " to " + std::to_string(-shape_count[1]) + ")");
  if (!counts.empty()) {
    MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_INT, MPI_MIN, comm_,
                                  &request));
    MGPU_MPI_CHECK(wait_bounded(request, "every rank's GEMM options for step-level tuning (MPI_Iallreduce)"));
  }
  const auto apply = [&](std::size_t shape, int option) {
    gemm.select(shape, option);
    recapture = true;
  };
  const auto measure = [&] {
    if (recapture) capture_step_graphs(steps_seen);
    recapture = false;
    return time_step_replays();
  };
  const auto began = std::chrono::steady_clock::now();
  const CoordinateSearch search = coordinate_search(counts, start, kMargin, kCheckRounds, apply, measure);
  if (recapture) capture_step_graphs(steps_seen);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

  const char* outcome = search.found == search.start      ? " (no option beat the margin: none changed)"
                        : search.selected == search.start ? " (no faster in the final check: none changed)"
                                                          : "";
  char line[256];
  std::snprintf(line, sizeof line,
                "step-level GEMM tuning: %d replay timings in %.2f s, step replay %.4f ms with the choices made alone, "
                "%.4f ms with the search's%s\n",
                search.evaluations, seconds, search.start_ms, search.selected_ms, outcome);
  std::string report = line;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (search.selected[s] == search.start[s]) continue;
    report += "  gemm " + shapes[s].shape + ": " + shapes[s].options[search.start[s]] + " -> " +
              shapes[s].options[search.selected[s]] + "\n";
  }
  return report;
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
  capturing_ = true;
  try {
    enqueue_step(marked ? &events_.front() : nullptr, kind);
  } catch (...) {
    capturing_ = false;
    CudaGraph::capture_abandon(compute);
    throw;
  }
  capturing_ = false;
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

  std::size_t count = 0;
  MGPU_CUDA_CHECK(cudaGraphGetNodes(captured.graph.graph(), nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  MGPU_CUDA_CHECK(cudaGraphGetNodes(captured.graph.graph(), nodes.data(), &count));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    MGPU_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeEventRecord) continue;
    cudaEvent_t event = nullptr;
    MGPU_CUDA_CHECK(cudaGraphEventRecordNodeGetEvent(node, &event));
    for (int m = 0; m < kMarkCount; ++m) {
      if (marked && events_.front()[m].get() == event) captured.event_nodes.emplace_back(node, Mark(m));
    }
  }
  // What enqueue_step records: all 7 marks with a reduction, 4 on one rank (start, forward_end, backward_end, end),
  // 3 on a step without update (its end is backward's); with --timing step only start and end.
  int marks_recorded = 0;
  if (marked) marks_recorded = !kind.update ? 3 : (nccl_ ? kMarkCount : 4);
  if (marked && settings_.timing == TimingMode::step) marks_recorded = 2;
  MGPU_REQUIRE(static_cast<int>(captured.event_nodes.size()) == marks_recorded,
               "the captured step has " + std::to_string(captured.event_nodes.size()) +
                   " timing event nodes, expected " + std::to_string(marks_recorded));
}

void CudaTrainer::retarget_graph_events(const CapturedStep& captured, int instance, int step) {
  const cudaGraphExec_t exec = captured.graph.exec(instance);
  for (const auto& [node, which] : captured.event_nodes) {
    MGPU_CUDA_CHECK(cudaGraphExecEventRecordNodeSetEvent(exec, node, events_[step][which].get()));
  }
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
  if (const char* spin_run = std::getenv("MGPU_FAULT_SPIN_KERNEL_RUN");
      spin_run != nullptr && std::atoi(spin_run) == run_index)
    fault_injection::launch_never_ending_kernel(compute);

  // The whole run is enqueued without a single host synchronisation: a host wait between steps would idle the GPU
  // and put host latency into the step times. The host blocks at most when the launch queue is full, which does not
  // change what the events measure. A run without marks inside its steps (--timing none, interleaved's unmarked runs)
  // has only the run marks, outside the steps, and then times the batch generation alone.
  const bool marked = !settings_.marks_nothing(run_index);
  if (!marked) run_marks_[kRunStart].record(compute);
  enqueue_run_steps(steps, marked);
  int generations = 0;
  if (!marked) {
    run_marks_[kRunEnd].record(compute);
    generations = enqueue_generation_alone();
  }

  wait_sampling_clocks(marked ? events_.back()[kEnd] : generation_marks_.back()[1]);
  record.measured_wall_ms = marked ? elapsed_ms(events_[settings_.warmup_steps][kStart], events_.back()[kEnd])
                                   : elapsed_ms(run_marks_[kMeasuredStart], run_marks_[kRunEnd]);
  record.phases_marked = settings_.marks_phases(run_index);
  if (!marked) record.batch_generation_ms = generation_alone_ms(generations);
  read_phase_times(record, marked);

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
    if (!marked && step == settings_.warmup_steps) run_marks_[kMeasuredStart].record(compute);
    const StepKind kind = kind_of(step);
    if (settings_.graph) {
      CapturedStep& captured = graphs[kind.index()];
      const int instance = captured.launches++ % captured.graph.copies();
      if (marked) retarget_graph_events(captured, instance, step);
      // The step counter in device memory tells the replay which step it is.
      captured.graph.launch(compute, instance);
    } else {
      enqueue_step(marked ? &events_[step] : nullptr, kind);
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

int CudaTrainer::gemm_candidates_checked() const {
  int checked = 0;
  for (const TunedGemm::ShapeOptions& shape : model_.gemm().shape_options()) checked += shape.checked;
  return checked;
}

int CudaTrainer::gemm_candidates_rejected() const {
  int rejected = 0;
  for (const TunedGemm::ShapeOptions& shape : model_.gemm().shape_options())
    rejected += static_cast<int>(shape.rejected.size());
  return rejected;
}

void CudaTrainer::mark(const StepEvents* events, Mark which, cudaStream_t stream) const {
  if (events == nullptr) return;
  // --timing step: the step's boundaries only (the other marks' nodes would each add their cost to the step).
  if (settings_.timing == TimingMode::step && which != kStart && which != kEnd) return;
  // Inside a capture a plain record would only order streams; the external flag makes it a node that records the
  // timestamp at every replay.
  if (capturing_) {
    (*events)[which].record_in_capture(stream);
  } else {
    (*events)[which].record(stream);
  }
}

void CudaTrainer::enqueue_step(const StepEvents* events, StepKind kind) {
  const cudaStream_t compute = compute_stream_.get();
  // Data loading is not part of the step (docs/measurement.md: forward starts with the batch in place). The batch is
  // generated on the compute stream before `start` is recorded, so `start` fires only once it is there.
  enqueue_bookkeeping_and_batch();

  // --fuse-optimizer (one rank): a step that updates leaves the weight gradients to the optimizer kernel, which forms
  // and applies them in one pass; a step that only accumulates must write them.
  const bool fused = settings_.fused_optimizer && kind.update;

  mark(events, kStart, compute);
  if (fused && output_head_) {
    // The output layer's forward, the loss and backward's first input gradient in one kernel (CudaMlp::
    // forward_with_output_head): two fewer links in the step's chain of dependent kernels. That input gradient, one
    // small product, is then timed in the forward phase.
    model_.forward_with_output_head(losses_.slots());
  } else {
    model_.forward();
    model_.loss_and_gradient(losses_.slots());
  }
  mark(events, kForwardEnd, compute);  // forward phase = start -> here, loss and dL/dy included

  // With overlap each bucket is handed to the communication stream as soon as backward has written its last piece;
  // without, the single bucket goes after backward_end. A step that does not end an accumulation only adds its
  // gradient: no reduction, no update (its allreduce, exposed_comm and optimizer phases are 0).
  const bool overlap = nccl_ && settings_.overlap && kind.update;
  // Adam applies the mean of the K accumulated gradients (each already a mean over its batch); 1 / 1 is exact.
  const float gradient_scale = 1.0f / static_cast<float>(settings_.accumulate_steps);
  // backward phase = forward_end -> backward_end: every gradient written (fused: every input and bias gradient; with
  // the output head, all but the output layer's input gradient, which the head wrote in the forward phase).
  if (overlap) {
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
  } else if (fused) {
    // Where it pays (CudaMlp::early_updates_pay), every layer above the first is updated as soon as backward is done
    // with its weights, beside the rest of backward (CudaMlp::EarlyUpdate); the first layer's update, which only
    // backward's last kernel makes possible, is then the optimizer phase, with the wait for the early ones.
    CudaMlp::EarlyUpdate early;
    early.adam = settings_.adam;
    early.gradient_scale = gradient_scale;
    early.accumulated = kind.accumulate;
    model_.backward_without_weight_gradients(model_.early_updates_pay() ? &early : nullptr);
    mark(events, kBackwardEnd, compute);
  } else {
    model_.backward(plan_, {}, kind.accumulate);
    // A step that only accumulates ends here: its end mark is backward's (a second mark right after it would add
    // the cost of an event-record node, about 3 us, to the step and to no phase).
    mark(events, kind.update ? kBackwardEnd : kEnd, compute);
  }
  if (!kind.update) return;
  if (nccl_ && !overlap) reduce_bucket(0, events);

  // One rank: nothing to reduce, nothing is enqueued or recorded, so the single-GPU baseline carries no cost a real
  // single-GPU run would not have; read_phase_times reports allreduce = exposed_comm = 0 and starts the optimizer
  // at backward_end. Otherwise Adam updates each bucket once its reduction is complete: the compute stream waits for
  // bucket b only (a GPU-side wait), so updating early buckets overlaps reducing later ones.
  if (fused) {
    // optimizer phase = weight gradients + Adam (with accumulation: added to the earlier steps' sum first).
    model_.adam_with_weight_gradients(settings_.adam, gradient_scale, kind.accumulate);
  } else if (!nccl_) {
    model_.adam(settings_.adam, 0, model_.parameter_count(), gradient_scale);
  } else {
    // Deferred overlap: backward reads no weight once it hands its first bucket over (CudaMlp::backward), so each
    // bucket is updated on the optimizer stream as soon as it is reduced, beside the weight-gradient GEMMs still
    // running, and the compute stream joins that stream before the step ends. Otherwise the compute stream updates them
    // in turn.
    const bool beside_backward = overlap && plan_.order == WeightGradientOrder::deferred;
    CudaStream& updates = beside_backward ? optimizer_stream_ : compute_stream_;
    for (std::size_t b = 0; b < plan_.buckets.size(); ++b) {
      updates.wait(bucket_reduced_[b].get());
      // Recorded on the updating stream after its first wait: the optimizer phase starts when that stream could
      // actually proceed, not when the communication stream finished.
      if (b == 0) mark(events, kOptimizerStart, updates.get());
      const GradientBucket& bucket = plan_.buckets[b];
      model_.adam(settings_.adam, bucket.begin, bucket.end - bucket.begin, gradient_scale, updates.get());
    }
    if (beside_backward) {
      updates_done_.record(optimizer_stream_.get());
      compute_stream_.wait(updates_done_.get());
    }
  }
  mark(events, kEnd, compute);  // step = start -> here
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
  wait.set_step_source([this] { return first_unfinished_step(); });
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

int CudaTrainer::first_unfinished_step() const {
  for (std::size_t step = 0; step < events_.size(); ++step)
    if (!events_[step][kEnd].query()) return static_cast<int>(step);
  return -1;  // or an unmarked run (no per-step events to ask)
}

void CudaTrainer::read_phase_times(RunRecord& record, bool marked) const {
  if (!marked) {
    // No mark inside the steps: no phase was measured (NaN says so to every reader); each step holds the mean step
    // time of its part of the run (warm-up or measured), which is all two events per part can say, less the
    // bookkeeping and batch generation that a marked step leaves before its start mark (timed alone, run()).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const int warmup = settings_.warmup_steps;
    const int measured = std::max(1, settings_.measured_steps);
    const double generation = record.batch_generation_ms;
    const double warmup_mean =
        warmup > 0 ? elapsed_ms(run_marks_[kRunStart], run_marks_[kMeasuredStart]) / warmup - generation : nan;
    const double measured_mean = elapsed_ms(run_marks_[kMeasuredStart], run_marks_[kRunEnd]) / measured - generation;
    // Both parts include the generation, so a mean at or below zero means the GPU ran other work while one was timed.
    MGPU_REQUIRE(measured_mean > 0.0 && !(warmup_mean <= 0.0),
                 "the batch generation timed alone (" + std::to_string(generation) +
                     " ms) took as long as a whole step (warm-up and measured means before subtracting it: " +
                     std::to_string(warmup_mean + generation) + " and " + std::to_string(measured_mean + generation) +
                     " ms): another process is using this GPU, so no time of this run means anything; run the "
                     "benchmark on GPUs nothing else uses");
    for (int step = 0; step < record.total_steps; ++step) {
      for (int p = 0; p < kPhaseCount; ++p) record.ms(Phase(p), step) = nan;
      record.ms(Phase::step, step) = step < warmup ? warmup_mean : measured_mean;
    }
    return;
  }
  for (int step = 0; step < record.total_steps; ++step) {
    const StepEvents& e = events_[step];
    record.ms(Phase::step, step) = elapsed_ms(e[kStart], e[kEnd]);
    if (settings_.timing == TimingMode::step) {  // only the step's boundaries were marked: no phase was measured
      for (int p = 0; p < kPhaseCount; ++p) {
        if (Phase(p) != Phase::step) record.ms(Phase(p), step) = std::numeric_limits<double>::quiet_NaN();
      }
      continue;
    }
    record.ms(Phase::forward, step) = elapsed_ms(e[kStart], e[kForwardEnd]);
    if (!settings_.ends_accumulation(step)) {
      // Gradient accumulation: this step only added its gradient (enqueue_step), and backward's end is the step's
      // end; nothing reduced, nothing updated.
      record.ms(Phase::backward, step) = elapsed_ms(e[kForwardEnd], e[kEnd]);
      for (Phase p : {Phase::allreduce, Phase::exposed_comm, Phase::optimizer}) record.ms(p, step) = 0.0;
      continue;
    }
    record.ms(Phase::backward, step) = elapsed_ms(e[kForwardEnd], e[kBackwardEnd]);
    // One rank (see enqueue_step): no reduction, its phases are 0 and the optimizer follows backward directly.
    record.ms(Phase::allreduce, step) = nccl_ ? elapsed_ms(e[kAllreduceStart], e[kAllreduceEnd]) : 0.0;
    // The last bucket holds the last piece backward writes, so its reduction ends after backward_end, overlap or not.
    record.ms(Phase::exposed_comm, step) = nccl_ ? elapsed_ms(e[kBackwardEnd], e[kAllreduceEnd]) : 0.0;
    record.ms(Phase::optimizer, step) = elapsed_ms(nccl_ ? e[kOptimizerStart] : e[kBackwardEnd], e[kEnd]);
  }
}

std::vector<float> CudaTrainer::parameters() const {
  ScopedDevice device(device_ordinal_);
  return model_.download_parameters();
}

}  // namespace mgpu
