// Purpose: the overlap levers measured on one GPU, before any multi-GPU machine (docs/performance.md, "Overlap on one
// GPU"): at each local batch of the 2-GPU cells whose speedup falls short of its ceiling,
//   (a) Adam over every parameter in one launch against Adam per gradient bucket (the --overlap-update forms);
//   (b) the 1-GPU step (a CUDA graph: batch, forward, loss, backward, Adam) while K SMs are held by another kernel
//       (probe_kernels::hold_sms: what a collective's K CTAs take from the GEMMs beside it), its GEMMs chosen for all
//       SMs against chosen for SMs - K (cuBLASLt's SM count target), and the target's cost when nothing is held;
//   (c) a stand-in for a collective (K blocks of fixed work) forked beside backward in the step's graph on the
//       highest-priority stream: when it ends after the step's start, with the graph instantiated plainly and with
//       node priorities (cudaGraphInstantiateFlagUseNodePriority).
// Each figure is the median over replays of a graph of kStepsPerGraph steps (ms per step), timed with events.
// Usage: overlap_probe [--quick | --phases | --targets]   (one GPU, the current device; prints Markdown tables;
// --quick: the first cell only; --phases: which phase of the step a hold slows; --targets: which SM count target
// suits a hold)
#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "kernels/probe_kernels.cuh"
#include "model/mlp_spec.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "platform/sample_median.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gradient_buckets.hpp"

namespace {

using namespace mgpu;

constexpr int kStepsPerGraph = 10;
constexpr int kReplays = 15;
constexpr unsigned long long kHoldLimitNs = 20'000'000'000ull;  // ends a hold whatever happens to the host
constexpr std::size_t kBucketBytes = 8'000'000;                 // --bucket-mb's default
constexpr std::size_t kLastBucketBytes = 1'000'000;

struct Cell {
  const char* model;
  int local_batch;
};

// The local batches of large at global batch 1024, 2048 and 4096 and of medium at 2048 and 4096 on 2 GPUs.
const Cell kCells[] = {{"large", 512}, {"large", 1024}, {"large", 2048}, {"medium", 1024}, {"medium", 2048}};
const int kHeldSms[] = {8, 16, 24, 32};

// Median ms per replay-step of `graph` on `stream` over kReplays replays of kStepsPerGraph-step graphs.
double time_replays(const CudaGraph& graph, cudaStream_t stream) {
  CudaEvent start, end;
  graph.launch(stream);  // warm
  std::vector<double> ms;
  for (int r = 0; r < kReplays; ++r) {
    start.record(stream);
    graph.launch(stream);
    end.record(stream);
    end.synchronize();
    ms.push_back(elapsed_ms(start, end) / kStepsPerGraph);
  }
  return median(ms);
}

// One model at one local batch on the current device, its step as the 1-GPU trainer runs it unfused.
class Step {
 public:
  Step(const Cell& cell, cudaStream_t stream)
      : model_(preset_model(cell.model)),
        batch_(cell.local_batch),
        stream_(stream),
        mlp_(model_, cell.local_batch, stream),
        losses_(kStepsPerGraph) {}

  // Tunes every GEMM shape (an eager step, as the trainer makes before capturing), then captures kStepsPerGraph
  // steps, each calling `beside_backward` (while capturing) right before backward.
  void capture(CudaGraph& graph, bool node_priorities = false, const std::function<void()>& beside_backward = {}) {
    mlp_.initialize(7, 0);
    enqueue_step({});
    MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    CudaGraph::capture_begin(stream_);
    try {
      for (int s = 0; s < kStepsPerGraph; ++s) enqueue_step(beside_backward);
    } catch (...) {
      CudaGraph::capture_abandon(stream_);
      throw;
    }
    graph.capture_end(stream_, 1, node_priorities);
  }
  // After a warm step, kStepsPerGraph repetitions of one phase of the step alone: 0 batch, 1 forward and loss,
  // 2 backward, 3 Adam.
  void capture_phase(CudaGraph& graph, int phase) {
    mlp_.initialize(7, 0);
    enqueue_step({});
    MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    graph.capture(stream_, [&] {
      for (int s = 0; s < kStepsPerGraph; ++s) {
        if (phase == 0) mlp_.generate_batch();
        if (phase == 1) mlp_.forward();
        if (phase == 1) mlp_.loss_and_gradient(loss_slots(losses_));
        if (phase == 2) mlp_.backward();
        if (phase == 3) mlp_.adam(adam_);
      }
    });
  }
  // The step's stream waits for `event` after backward, before Adam (once, in the step being captured).
  void defer_join(const CudaEvent* event) { join_ = event; }
  CudaMlp& mlp() { return mlp_; }
  const MlpSpec& model() const { return model_; }

 private:
  void enqueue_step(const std::function<void()>& beside_backward) {
    mlp_.advance_step(batch_, 0, adam_);
    mlp_.generate_batch();
    mlp_.forward();
    mlp_.loss_and_gradient(loss_slots(losses_));
    if (beside_backward) beside_backward();
    mlp_.backward();
    if (join_ != nullptr) MGPU_CUDA_CHECK(cudaStreamWaitEvent(stream_, join_->get(), 0));
    join_ = nullptr;
    mlp_.adam(adam_);
  }

  MlpSpec model_;
  int batch_;
  cudaStream_t stream_;
  CudaMlp mlp_;
  DeviceBuffer<float> losses_;
  AdamSettings adam_;
  const CudaEvent* join_ = nullptr;
};

int device_sms() {
  int device = 0, sms = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// The step graph's ms per step while `held` SMs are held (0: none) on a stream beside it.
double step_ms_beside_hold(const CudaGraph& graph, cudaStream_t stream, int held) {
  if (held == 0) return time_replays(graph, stream);
  CudaStream holding;
  DeviceFlag release;
  probe_kernels::hold_sms(held, release.device_pointer(), kHoldLimitNs, holding.get());
  const double ms = time_replays(graph, stream);
  release.set(1);
  MGPU_CUDA_CHECK(cudaStreamSynchronize(holding.get()));
  return ms;
}

// (a) Adam over every parameter: one launch against one per bucket of the deferred overlap plan.
void adam_forms(Step& step, cudaStream_t stream) {
  const BucketPlan plan = deferred_overlap_plan(step.model(), kBucketBytes, kLastBucketBytes);
  const AdamSettings adam;
  CudaMlp& mlp = step.mlp();
  CudaGraph one, per_bucket;
  one.capture(stream, [&] {
    for (int s = 0; s < kStepsPerGraph; ++s) mlp.adam(adam);
  });
  per_bucket.capture(stream, [&] {
    for (int s = 0; s < kStepsPerGraph; ++s)
      for (const GradientBucket& b : plan.buckets) mlp.adam(adam, b.begin, b.end - b.begin);
  });
  std::printf("| %s | %zu | %.4f | %.4f |\n", step.model().name.c_str(), plan.buckets.size(), time_replays(one, stream),
              time_replays(per_bucket, stream));
}

// (b) The step beside K held SMs, backward's GEMMs for all SMs and for SMs - K (what --overlap-sm-target sets).
void held_sms(const Cell& cell, cudaStream_t stream, int sms) {
  Step step(cell, stream);
  CudaGraph all;
  step.capture(all);
  const double free_ms = time_replays(all, stream);
  for (int held : kHeldSms) {
    const double default_ms = step_ms_beside_hold(all, stream, held);
    step.mlp().set_backward_sm_count_target(sms - held);
    CudaGraph targeted;
    step.capture(targeted);
    const double target_free_ms = time_replays(targeted, stream);
    const double target_ms = step_ms_beside_hold(targeted, stream, held);
    step.mlp().set_backward_sm_count_target(0);
    std::printf("| %s | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", cell.model, cell.local_batch, held, free_ms,
                default_ms, target_ms, target_free_ms);
  }
}

// (c) A stand-in for a collective's CTAs, forked right before backward on the highest-priority stream: `blocks`
// blocks that each need a whole SM (probe_kernels::hold_sms, released before it starts, so each ends as soon as it
// runs). The ms from the fork to its end (event nodes of the graph, the last step of each replay), and the step's, with
// the graph instantiated plainly and with node priorities. The compute stream joins it before Adam, as the update
// joins a bucket's reduction.
void priorities(const Cell& cell, cudaStream_t stream, int blocks) {
  CudaStream side = CudaStream::highest_priority();
  DeviceFlag released;
  released.set(1);
  CudaEvent fork{cudaEventDisableTiming}, join{cudaEventDisableTiming};
  CudaEvent forked, ended;  // timed: the fork and the stand-in's end, recorded as nodes of the graph
  double latency_ms[2] = {}, step_ms[2] = {};
  for (int with_priority = 0; with_priority < 2; ++with_priority) {
    Step step(cell, stream);
    CudaGraph graph;
    step.capture(graph, with_priority == 1, [&] {
      forked.record_in_capture(stream);
      fork.record(stream);
      side.wait(fork.get());
      probe_kernels::hold_sms(blocks, released.device_pointer(), kHoldLimitNs, side.get());
      ended.record_in_capture(side.get());
      join.record(side.get());
      step.defer_join(&join);
    });
    step_ms[with_priority] = time_replays(graph, stream);
    std::vector<double> latencies;
    for (int r = 0; r < kReplays; ++r) {
      graph.launch(stream);
      MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
      latencies.push_back(elapsed_ms(forked, ended));
    }
    latency_ms[with_priority] = median(latencies);
  }
  std::printf("| %s | %d | %d | %.4f | %.4f | %.4f | %.4f |\n", cell.model, cell.local_batch, blocks, latency_ms[0],
              latency_ms[1], step_ms[0], step_ms[1]);
}

// Which phase of the step a hold slows: each phase alone, beside nothing and beside K held SMs (large, local batch
// 2048).
void phases_beside_hold(cudaStream_t stream) {
  std::printf(
      "\n## which phase a hold slows (large, local batch 2048)\n\n| phase | alone | beside 8 | beside 24 |\n"
      "|---|---|---|---|\n");
  Step step({"large", 2048}, stream);
  const char* names[] = {"batch", "forward and loss", "backward", "Adam"};
  for (int phase = 0; phase < 4; ++phase) {
    CudaGraph graph;
    step.capture_phase(graph, phase);
    std::printf("| %s | %.4f | %.4f | %.4f |\n", names[phase], step_ms_beside_hold(graph, stream, 0),
                step_ms_beside_hold(graph, stream, 8), step_ms_beside_hold(graph, stream, 24));
  }
}

// Which SM count target suits K held SMs: the step beside K with backward's GEMMs chosen for SMs - K, SMs - 2K, SMs -
// 3K and half the SMs (large and medium, local batch 2048). A thread block cluster needs free SMs side by side, so a
// hold may take more SMs from a clustered GEMM than it holds.
void targets_beside_hold(cudaStream_t stream, int sms) {
  std::printf(
      "\n## the step beside K held SMs by SM count target (local batch 2048)\n\n"
      "| model | K | all SMs | SMs - K | SMs - 2K | SMs - 3K | SMs / 2 |\n|---|---|---|---|---|---|---|\n");
  for (const char* model : {"large", "medium"}) {
    Step step({model, 2048}, stream);
    for (int held : {8, 16, 24}) {
      std::printf("| %s | %d |", model, held);
      for (int target : {0, sms - held, sms - 2 * held, sms - 3 * held, sms / 2}) {
        step.mlp().set_backward_sm_count_target(target);
        CudaGraph graph;
        step.capture(graph);
        std::printf(" %.4f |", step_ms_beside_hold(graph, stream, held));
      }
      std::printf("\n");
    }
    step.mlp().set_backward_sm_count_target(0);
  }
}

int run(bool quick, bool phases, bool targets) {
  if (visible_cuda_device_count() == 0) {
    std::fprintf(stderr, "overlap_probe: error: no CUDA device visible\n");
    return 1;
  }
  CudaStream stream;
  const int sms = device_sms();
  std::printf("# overlap_probe on %d SMs; ms per step or per call, median of %d replays of %d\n\n", sms, kReplays,
              kStepsPerGraph);
  if (phases || targets) {
    if (phases) phases_beside_hold(stream.get());
    if (targets) targets_beside_hold(stream.get(), sms);
    return 0;
  }
  std::printf(
      "## (a) Adam over every parameter\n\n| model | buckets | one launch | one per bucket |\n|---|---|---|---|\n");
  for (const char* model : {"large", "medium"}) {
    Step step({model, 1024}, stream.get());
    CudaGraph warm;
    step.capture(warm);
    adam_forms(step, stream.get());
  }
  std::printf(
      "\n## (b) the 1-GPU step beside K held SMs\n\n"
      "| model | local batch | K held | step alone | beside K, GEMMs for all SMs | beside K, GEMMs for SMs - K "
      "| GEMMs for SMs - K, nothing held |\n|---|---|---|---|---|---|---|\n");
  for (const Cell& cell : kCells) {
    held_sms(cell, stream.get(), sms);
    if (quick) break;
  }
  std::printf(
      "\n## (c) a stand-in collective of K whole-SM blocks forked before backward, highest priority\n\n"
      "| model | local batch | K | fork to its end, plain graph | with node priorities | step, plain | step, "
      "node priorities |\n|---|---|---|---|---|---|---|\n");
  for (const Cell& cell : kCells) {
    for (int blocks : {8, 24}) priorities(cell, stream.get(), blocks);
    if (quick) break;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    return run(mode == "--quick", mode == "--phases", mode == "--targets");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overlap_probe: error: %s\n", e.what());
    return 1;
  }
}
