// Purpose: the CUDA + NCCL training back-end: data-parallel steps on one GPU per rank, each phase timed with CUDA
// events as docs/measurement.md defines it, a whole run enqueued without host synchronisation, the step replayed as one
// CUDA graph (NCCL included) and its gradients reduced in buckets that overlap backward.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/nccl_communicator.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gradient_buckets.hpp"
#include "train/loss_buffer.hpp"
#include "train/trainer.hpp"

namespace mgpu {

class CudaTrainer final : public Trainer {
 public:
  // Collective over `comm` (NCCL set-up, and with settings.graph one eager step and its capture) when it has more
  // than one rank. Rank r of N trains on the contiguous slice [r*B/N, (r+1)*B/N) of every global batch B on GPU
  // `device_ordinal`; B must be divisible by N.
  CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal);
  ~CudaTrainer() override;
  CudaTrainer(const CudaTrainer&) = delete;
  CudaTrainer& operator=(const CudaTrainer&) = delete;

  RunRecord run(int run_index) override;
  std::vector<float> parameters() const override;
  std::string device_kind() const override { return "cuda"; }
  std::string gemm_choices() const override;
  std::string unique_id_check() const override { return nccl_ ? nccl_->id_check() : std::string(); }
  std::vector<float> parameters_after_steps(int steps) override;
  ReferenceRun reference_run(int steps) const override;
  int gemm_candidates_checked() const override;
  int gemm_candidates_rejected() const override;

  int local_batch() const noexcept { return local_batch_; }
  // The buckets the gradient is reduced in (one bucket without overlap or with one rank).
  const BucketPlan& bucket_plan() const noexcept { return plan_; }
  // Whether the steps that update with the fused optimizer run the fused output head (CudaMlp's
  // forward_with_output_head): --fuse-optimizer, a model and batch the head serves, and not MGPU_OUTPUT_HEAD=off.
  bool fuses_output_head() const noexcept { return output_head_; }

 private:
  // The instants that bound the phases of one step (docs/measurement.md). allreduce_start/_end are on the communication
  // stream, the others on the compute stream; the reduction marks and optimizer_start exist only with > 1 rank.
  enum Mark : int {
    kStart,           // the batch is in place, the step begins
    kForwardEnd,      // loss and dL/dy written (with the fused output head, the last hidden layer's dL/dZ too)
    kBackwardEnd,     // last gradient written
    kAllreduceStart,  // the first bucket's reduction may begin (after its wait for the gradients)
    kAllreduceEnd,    // the last bucket reduced
    kOptimizerStart,  // the updating stream may update (after its wait for the first reduced bucket)
    kEnd,             // parameters updated, the step is over
    kMarkCount
  };
  using StepEvents = std::array<CudaEvent, kMarkCount>;
  // A run without marks inside its steps (--timing none, interleaved's unmarked runs): its only events, outside the
  // steps. The batch generation timed alone after such a run has pairs of its own (generation_marks_).
  enum RunMark : int { kRunStart, kMeasuredStart, kRunEnd, kRunMarkCount };
  // The batch generation alone is timed in this many windows and the fastest is kept: it is subtracted from a step
  // mean of tens of microseconds, and one window that met other work on the GPU (a time slice is milliseconds) would
  // otherwise make the step mean negative.
  static constexpr int kGenerationWindows = 3;

  // What a step does under gradient accumulation (--accumulate K): its gradient overwrites the buffer (first step of a
  // group) or is added to it, and it reduces and updates (last step of a group) or not. K = 1: every step is
  // {overwrite, update}. Each kind a run uses is captured as a graph of its own.
  struct StepKind {
    bool accumulate = false;
    bool update = true;
    int index() const { return (accumulate ? 2 : 0) + (update ? 1 : 0); }
  };
  static constexpr int kStepKinds = 4;
  StepKind kind_of(int step) const { return {!settings_.starts_accumulation(step), settings_.ends_accumulation(step)}; }
  // One captured step kind: its graph, the graph's event-record nodes with their marks, and how often it was launched
  // (which of its instances comes next).
  struct CapturedStep {
    CudaGraph graph;
    std::vector<std::pair<cudaGraphNode_t, Mark>> event_nodes;
    int launches = 0;
  };

  // Enqueues one whole step (advance the step counter, batch, forward, backward and, when the kind updates,
  // reductions and Adam) on the streams; `events` (null with --timing none) receive the phase marks. Identical work
  // whether captured or launched eagerly.
  void enqueue_step(const StepEvents* events, StepKind kind);
  // Enqueues steps 0 .. steps - 1 of a run as run() does: graph replays (with marks or without) or eager steps.
  void enqueue_run_steps(int steps, bool marked);
  // What a step enqueues before its start mark: the bookkeeping (advance the step's values) and its batch.
  void enqueue_bookkeeping_and_batch();
  void reduce_bucket(int bucket, const StepEvents* events);
  void mark(const StepEvents* events, Mark which, cudaStream_t stream) const;
  void capture_step_graph(StepKind kind, bool marked);
  // Captures every step kind of the first `steps` steps (replacing earlier captures): with marks where some run marks
  // its steps, without where some run does not (--timing interleaved: both).
  void capture_step_graphs(int steps);
  // The step graphs a run replays: with marks or without.
  std::array<CapturedStep, kStepKinds>& step_graphs(bool marked) { return marked ? marked_graphs_ : unmarked_graphs_; }
  // Enqueues, after a run without marks, the step's bookkeeping and batch generation alone, back-to-back as in the
  // step (a graph of kGenerationsPerReplay of them where the step is a graph), in each of kGenerationWindows windows
  // between generation_marks_; returns how many one window enqueues.
  int enqueue_generation_alone();
  // The fastest window's time per batch generation, in ms (after the windows' last event completed).
  double generation_alone_ms(int generations_per_window) const;
  // Step-level GEMM tuning (graph replay; with several ranks collective over comm_): among each GEMM shape's options
  // (TunedGemm::shape_options), the ones with which the whole step, replayed, is fastest; see the definition for the
  // search. Returns what it found, for the report.
  std::string tune_step_gemms(int steps_seen);
  // The mean time per step of replayed step graphs (kinds as a run's steps 0, 1, ...), the lowest of a few repeats,
  // from freshly initialised parameters.
  double time_step_replays();
  // Points the event-record nodes of instance `instance` of `captured` at step `step`'s events (they were captured
  // with step 0's).
  void retarget_graph_events(const CapturedStep& captured, int instance, int step);

  void wait_sampling_clocks(const CudaEvent& last);
  // The first step whose end event has not completed (-1 when all have, or with --timing none): where a stall is.
  int first_unfinished_step() const;
  // Polls `event` to completion under a BoundedWait (watchdog.hpp), NCCL's asynchronous errors included.
  void wait_bounded_for(const CudaEvent& event, const std::string& waiting_for) const;
  // Both streams' work so far, waited for as wait_bounded_for does.
  void wait_bounded_for_streams(const std::string& waiting_for) const;
  void read_phase_times(RunRecord& record, bool marked) const;

  TrainingSettings settings_;
  int rank_;
  int world_size_;
  int local_batch_;
  int device_ordinal_;  // made current before any resource below is created
  CudaStream compute_stream_;
  // Highest priority: in eager steps a reduction launched during backward gets SMs as soon as a GEMM's blocks retire,
  // instead of queueing behind the rest of backward. A graph replay runs every node at the priority of the stream it
  // is launched into (node priorities apply only with cudaGraphInstantiateFlagUseNodePriority, which measured no
  // different on 2 x H200: docs/performance-history.md).
  CudaStream comm_stream_ = CudaStream::highest_priority();
  std::unique_ptr<NcclCommunicator> nccl_;  // only with more than one rank
  CudaMlp model_;
  BucketPlan plan_;
  MPI_Comm comm_;                   // the ranks of this run (step-level GEMM tuning agrees over it)
  bool output_head_;                // fuses_output_head()
  LossBuffer losses_;               // [step] of the current run, copied back (its guard checked) once it is over
  std::vector<StepEvents> events_;  // [step]; empty where no run marks its steps (--timing none)
  std::array<CudaEvent, kRunMarkCount> run_marks_;
  std::array<std::array<CudaEvent, 2>, kGenerationWindows> generation_marks_;  // start, end of each window
  CudaEvent gradients_ready_{cudaEventDisableTiming};  // compute -> communication stream, before each bucket
  std::vector<CudaEvent> bucket_reduced_;              // communication -> updating stream, one per bucket
  // Deferred overlap: Adam per reduced bucket beside backward, on a stream of its own (highest priority, in eager
  // steps: an update's blocks get SMs as the weight-gradient GEMMs' blocks retire, so the last updates do not wait for
  // backward's end), and the event that joins it back into the compute stream.
  CudaStream optimizer_stream_ = CudaStream::highest_priority();
  CudaEvent updates_done_{cudaEventDisableTiming};
  bool capturing_ = false;
  static constexpr int kGraphCopies = 4;  // instances of the step graph used in turn (see capture_step_graph)
  // [StepKind::index()]; only the kinds the run uses are captured, with marks and without as capture_step_graphs says.
  std::array<CapturedStep, kStepKinds> marked_graphs_;
  std::array<CapturedStep, kStepKinds> unmarked_graphs_;
  // Where the step is a graph: kGenerationsPerReplay x (bookkeeping, batch generation), captured once.
  static constexpr int kGenerationsPerReplay = 16;
  CudaGraph generation_graph_;
  GpuClockSampler clock_sampler_;
};

}  // namespace mgpu
