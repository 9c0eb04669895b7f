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
#include "train/persistent_step.hpp"
#include "train/step_timeline.hpp"
#include "train/trainer.hpp"

namespace mgpu {

class CudaTrainer final : public Trainer {
 public:
  // Collective over `comm` (NCCL set-up, and with settings.graph one eager step and its capture) when it has more
  // than one rank. Rank r of N trains on the contiguous slice [r*B/N, (r+1)*B/N) of every global batch B on GPU
  // `device_ordinal`; B must be divisible by N.
  // gemm_tunings: the job's (gemm_tunings.hpp), cleared by the job between configurations; none: the process's.
  CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal, GemmTunings* gemm_tunings = nullptr);
  ~CudaTrainer() override;
  CudaTrainer(const CudaTrainer&) = delete;
  CudaTrainer& operator=(const CudaTrainer&) = delete;

  RunRecord run(int run_index) override;
  std::vector<float> parameters() const override;
  std::string device_kind() const override { return "cuda"; }
  std::string gemm_choices() const override;
  std::string step_kernel_chosen() const override { return persistent_in_use_ ? "persistent" : "chain"; }
  std::string unique_id_check() const override { return nccl_ ? nccl_->id_check() : std::string(); }
  std::vector<float> parameters_after_steps(int steps) override;
  ReferenceRun reference_run(int steps) const override;
  int gemm_candidates_checked() const override;
  int gemm_candidates_rejected() const override;
  double gemm_verification_seconds() const override;

  int local_batch() const noexcept { return local_batch_; }
  // The buckets the gradient is reduced in (one bucket without overlap or with one rank).
  const BucketPlan& bucket_plan() const noexcept { return plan_; }
  // Whether the steps that update with the fused optimizer run the fused output head (CudaMlp's
  // forward_with_output_head): --fuse-optimizer, a model and batch the head serves, and not MGPU_OUTPUT_HEAD=off.
  bool fuses_output_head() const noexcept { return output_head_; }
  // Whether the steps run as one persistent kernel (--step-kernel persistent, or auto where set-up found it faster).
  bool runs_persistent_step() const noexcept { return persistent_in_use_; }

 private:
  using StepEvents = StepTimeline::StepEvents;

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
    StepTimeline::EventNodes event_nodes;
    int launches = 0;
  };

  // Enqueues one whole step (advance the step counter, batch, forward, backward and, when the kind updates,
  // reductions and Adam) on the streams; `events` (null with --timing none) receive the phase marks. Identical work
  // whether captured or launched eagerly.
  void enqueue_step(const StepEvents* events, StepKind kind);
  // How one step runs: its kind, whether the fused optimizer updates it (--fuse-optimizer, a step that updates) and
  // whether its buckets are reduced during backward (--overlap, more than one rank, a step that updates).
  struct StepPlan {
    StepKind kind;
    bool fused = false;
    bool overlap = false;
    bool sharded = false;            // --optimizer-sharding, more than one rank, a step that updates
    bool update_after_last = false;  // with overlap: --overlap-update after-last
  };
  // The step as the persistent kernel (--step-kernel): one launch, or one per phase where the phases are marked.
  void enqueue_persistent_step(const StepEvents* events, StepKind kind);
  // Makes the persistent step where --step-kernel may run it (persistent, or auto where the model, batch and GPU
  // allow it), not yet in use; refuses --step-kernel persistent where it cannot run (UsageError, one line).
  void set_up_persistent_step();
  // The persistent step's first launch (eager, outside any capture; nothing where there is none).
  void warm_up_persistent_step();
  // After GEMM tuning: the steps run the persistent kernel where it was asked for, or where auto finds it faster
  // (choose_step_kernel); the graphs of the first `steps_seen` steps are left captured for what runs.
  void settle_step_kernel(int steps_seen);
  // --step-kernel auto: the chain or the persistent kernel, whichever replays the step faster (as the GEMM search
  // decides, coordinate_search.hpp). Returns what it found, for the report.
  std::string choose_step_kernel(int steps_seen);
  // The parts of enqueue_step, in the order a step runs them.
  void enqueue_forward(const StepPlan& step);
  void enqueue_backward_reducing_buckets(const StepEvents* events, StepKind kind);
  void enqueue_backward_for_fused_update(StepKind kind);
  void enqueue_update(const StepEvents* events, const StepPlan& step);
  void enqueue_update_per_reduced_bucket(const StepEvents* events, const StepPlan& step);
  void enqueue_update_after_last_bucket(const StepEvents* events);
  // --optimizer-sharding: the gradient reduce-scattered (each rank's shard averaged over the ranks), then Adam on this
  // rank's shard and the parameters all-gathered.
  void reduce_scatter_gradients(const StepEvents* events);
  void enqueue_sharded_update(const StepEvents* events);
  // The parameters' split for the sharded optimizer: rank r updates [r * shard, (r + 1) * shard); NCCL's
  // reduce-scatter and all-gather take equal parts, so the last P mod N elements (the tail) are all-reduced and
  // updated by every rank.
  struct OptimizerShards {
    std::size_t shard = 0;
    std::size_t tail_begin = 0;
    std::size_t tail = 0;
  };
  // Adam applies the mean of the K accumulated gradients (each already a mean over its batch); 1 / 1 is exact.
  float gradient_scale() const { return 1.0f / static_cast<float>(settings_.accumulate_steps); }
  // Enqueues steps 0 .. steps - 1 of a run as run() does: graph replays (with marks or without) or eager steps.
  void enqueue_run_steps(int steps, bool marked);
  // What a step enqueues before its start mark: the bookkeeping (advance the step's values) and its batch.
  void enqueue_bookkeeping_and_batch();
  void reduce_bucket(int bucket, const StepEvents* events);
  void mark(const StepEvents* events, StepTimeline::Mark which, cudaStream_t stream) const {
    timeline_.mark(events, which, stream);
  }
  void capture_step_graph(StepKind kind, bool marked);
  // Captures every step kind of the first `steps` steps (replacing earlier captures): with marks where some run marks
  // its steps, without where some run does not (--timing interleaved: both).
  void capture_step_graphs(int steps);
  // The step graphs a run replays: with marks or without.
  std::array<CapturedStep, kStepKinds>& step_graphs(bool marked) { return marked ? marked_graphs_ : unmarked_graphs_; }
  // Enqueues, after a run without marks, the step's bookkeeping and batch generation alone, back-to-back as in the
  // step (a graph of kGenerationsPerReplay of them where the step is a graph), in each of the timeline's windows;
  // returns how many one window enqueues.
  int enqueue_generation_alone();
  // Step-level GEMM tuning (graph replay; with several ranks collective over comm_): among each GEMM shape's options
  // (TunedGemm::shape_options), the ones with which the whole step, replayed, is fastest; see the definition for the
  // search. Returns what it found, for the report.
  std::string tune_step_gemms(int steps_seen);
  // The mean time per step of replayed step graphs (kinds as a run's steps 0, 1, ...), the lowest of a few repeats,
  // from freshly initialised parameters.
  double time_step_replays();
  // Polls `event` to completion under a BoundedWait (watchdog.hpp), NCCL's asynchronous errors included.
  void wait_bounded_for(const CudaEvent& event, const std::string& waiting_for) const;
  // Both streams' work so far, waited for as wait_bounded_for does.
  void wait_bounded_for_streams(const std::string& waiting_for) const;

  TrainingSettings settings_;
  int rank_;
  int world_size_;
  int local_batch_;
  int device_ordinal_;  // made current before any resource below is created
  CudaStream compute_stream_;
  // Highest priority: in eager steps a reduction launched during backward gets SMs as soon as a GEMM's blocks retire,
  // instead of queueing behind the rest of backward. A graph replay runs every node at the priority of the stream it
  // is launched into (node priorities apply only with cudaGraphInstantiateFlagUseNodePriority, which measured no
  // different on 2 x H200).
  CudaStream comm_stream_ = CudaStream::highest_priority();
  std::unique_ptr<NcclCommunicator> nccl_;  // only with more than one rank
  CudaMlp model_;
  BucketPlan plan_;
  MPI_Comm comm_;      // the ranks of this run (step-level GEMM tuning agrees over it)
  bool output_head_;   // fuses_output_head()
  LossBuffer losses_;  // [step] of the current run, copied back (its guard checked) once it is over
  StepTimeline timeline_;
  CudaEvent gradients_ready_{cudaEventDisableTiming};  // compute -> communication stream, before each bucket
  std::vector<CudaEvent> bucket_reduced_;              // communication -> updating stream, one per bucket
  // Deferred overlap: Adam per reduced bucket beside backward, on a stream of its own (highest priority, in eager
  // steps: an update's blocks get SMs as the weight-gradient GEMMs' blocks retire, so the last updates do not wait for
  // backward's end), and the event that joins it back into the compute stream.
  CudaStream optimizer_stream_ = CudaStream::highest_priority();
  CudaEvent updates_done_{cudaEventDisableTiming};
  OptimizerShards shards_;                                 // with --optimizer-sharding
  CudaEvent shard_updated_{cudaEventDisableTiming};        // compute -> communication: this rank's shard is updated
  CudaEvent parameters_gathered_{cudaEventDisableTiming};  // communication -> compute: every shard is back
  static constexpr int kGraphCopies = 4;  // instances of the step graph used in turn (see capture_step_graph)
  // [StepKind::index()]; only the kinds the run uses are captured, with marks and without as capture_step_graphs says.
  std::array<CapturedStep, kStepKinds> marked_graphs_;
  std::array<CapturedStep, kStepKinds> unmarked_graphs_;
  // Where the step is a graph: kGenerationsPerReplay x (bookkeeping, batch generation), captured once.
  static constexpr int kGenerationsPerReplay = 16;
  CudaGraph generation_graph_;
  // The persistent step where --step-kernel may run it, and whether the steps run it now (see runs_persistent_step).
  std::unique_ptr<PersistentStep> persistent_;
  bool persistent_in_use_ = false;
  GpuClockSampler clock_sampler_;
};

}  // namespace mgpu
