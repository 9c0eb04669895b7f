// Purpose: the CUDA trainer's timing, apart from the steps it times: the events that mark each step's phases
// (recorded eagerly, or as nodes of a captured step re-pointed to each step's own events before its replay), the
// marks of runs without them, the batch generation timed alone, and the phase times read back (step_phases.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <functional>
#include <utility>
#include <vector>

#include "platform/cuda_resources.hpp"
#include "results/run_record.hpp"
#include "train/step_phases.hpp"
#include "train/trainer.hpp"

namespace mgpu {

class StepTimeline {
 public:
  // The instants that bound the phases of one step (docs/measurement.md). allreduce_start/_end are on the
  // communication stream, the others on the compute stream; the reduction marks and optimizer_start exist only with
  // more than one rank.
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
  // A captured step's event-record nodes, each with the mark it records.
  using EventNodes = std::vector<std::pair<cudaGraphNode_t, Mark>>;
  // A run without marks inside its steps (--timing none, interleaved's unmarked runs): its only events, outside them.
  enum RunMark : int { kRunStart, kMeasuredStart, kRunEnd, kRunMarkCount };

  // `settings` must outlive the timeline (the trainer owns both). Per-step events exist where some run marks steps.
  explicit StepTimeline(const TrainingSettings& settings);

  // The events step `step` records; null where no run marks its steps. Step 0's are also those a capture records.
  const StepEvents* step_events(int step) const { return events_.empty() ? nullptr : &events_[step]; }
  // Records mark `which` of `events` on `stream`: nothing where `events` is null, only start and end with --timing
  // step (the others would each add an event-record node's cost to the step), and while a step is being captured a
  // node that records the timestamp at every replay.
  void mark(const StepEvents* events, Mark which, cudaStream_t stream) const;
  // Whether mark() records the marks between start and end for `events` (not with --timing step, nor without events).
  bool records_phase_marks(const StepEvents* events) const {
    return events != nullptr && settings_.timing != TimingMode::step;
  }
  void set_capturing(bool capturing) { capturing_ = capturing; }
  // How many marks a step of this kind records (what a capture of it must hold).
  int marks_per_step(bool marked, StepWork work) const;
  // The event-record nodes of `graph`, captured with step 0's events.
  EventNodes event_nodes(cudaGraph_t graph) const;
  // Points the event-record nodes of `exec` at step `step`'s events (cudaGraphExecEventRecordNodeSetEvent changes
  // only later launches, never one in flight).
  void retarget(cudaGraphExec_t exec, const EventNodes& nodes, int step) const;

  void mark_run(RunMark which, cudaStream_t stream) const { run_marks_[which].record(stream); }
  // The batch generation alone, after a run without marks: `enqueue_window` (as many generations as the measured
  // steps, back to back as in the step) between the marks of each of kGenerationWindows windows.
  void time_generation_alone(cudaStream_t stream, const std::function<void()>& enqueue_window) const;
  // The fastest window's time per generation, in ms (after the windows' last event completed).
  double generation_alone_ms(int generations_per_window) const;
  // The run's last event: what the host waits for.
  const CudaEvent& last_event(bool marked) const { return marked ? events_.back()[kEnd] : generation_marks_.back()[1]; }
  // The first step whose end event has not completed (-1 when all have, or in a run without marks): where a stall is.
  int first_unfinished_step() const;
  // First measured step's start to the last step's end.
  double measured_wall_ms(bool marked) const;
  // Every step's phase times of a finished run (step_phases.hpp). reduced: the steps that update reduce.
  void read_phase_times(RunRecord& record, bool marked, bool reduced) const;

 private:
  // The batch generation alone is timed in this many windows and the fastest is kept: it is subtracted from a step
  // mean of tens of microseconds, and one window that met other work on the GPU (a time slice is milliseconds) would
  // otherwise make the step mean negative.
  static constexpr int kGenerationWindows = 3;

  StepMarkTimes marked_step_times(int step, StepWork work) const;
  void read_unmarked_run(RunRecord& record) const;

  const TrainingSettings& settings_;
  bool capturing_ = false;
  std::vector<StepEvents> events_;  // [step]; empty where no run marks its steps (--timing none)
  std::array<CudaEvent, kRunMarkCount> run_marks_;
  std::array<std::array<CudaEvent, 2>, kGenerationWindows> generation_marks_;  // start, end of each window
};

}  // namespace mgpu
