// Purpose: the CUDA trainer's timing (step_timeline.hpp).
#include "train/step_timeline.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "platform/cuda_check.hpp"
#include "platform/error.hpp"

namespace mgpu {

StepTimeline::StepTimeline(const TrainingSettings& settings)
    : settings_(settings),
      events_(settings.timing != TimingMode::none ? static_cast<std::size_t>(settings.total_steps()) : 0) {}

void StepTimeline::mark(const StepEvents* events, Mark which, cudaStream_t stream) const {
  if (events == nullptr) return;
  if (which != kStart && which != kEnd && !records_phase_marks(events)) return;
  // Inside a capture a plain record would only order streams; the external flag makes it a node that records the
  // timestamp at every replay.
  if (capturing_) {
    (*events)[which].record_in_capture(stream);
  } else {
    (*events)[which].record(stream);
  }
}

int StepTimeline::marks_per_step(bool marked, StepWork work) const {
  if (!marked) return 0;
  if (settings_.timing == TimingMode::step) return 2;  // start and end
  // A step without update ends at backward's end (start, forward_end, end); one rank adds backward_end; a reduction
  // adds its start and end and the optimizer's start.
  if (!work.update) return 3;
  return work.reduced ? kMarkCount : 4;
}

StepTimeline::EventNodes StepTimeline::event_nodes(cudaGraph_t graph) const {
  std::size_t count = 0;
  MGPU_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  MGPU_CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  EventNodes marks;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    MGPU_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeEventRecord) continue;
    cudaEvent_t event = nullptr;
    MGPU_CUDA_CHECK(cudaGraphEventRecordNodeGetEvent(node, &event));
    for (int m = 0; m < kMarkCount; ++m) {
      if (!events_.empty() && events_.front()[m].get() == event) marks.emplace_back(node, Mark(m));
    }
  }
  return marks;
}

void StepTimeline::retarget(cudaGraphExec_t exec, const EventNodes& nodes, int step) const {
  for (const auto& [node, which] : nodes)
    MGPU_CUDA_CHECK(cudaGraphExecEventRecordNodeSetEvent(exec, node, events_[step][which].get()));
}

void StepTimeline::time_generation_alone(cudaStream_t stream, const std::function<void()>& enqueue_window) const {
  for (const std::array<CudaEvent, 2>& window : generation_marks_) {
    window[0].record(stream);
    enqueue_window();
    window[1].record(stream);
  }
}

double StepTimeline::generation_alone_ms(int generations_per_window) const {
  double fastest = std::numeric_limits<double>::infinity();
  for (const std::array<CudaEvent, 2>& window : generation_marks_)
    fastest = std::min(fastest, elapsed_ms(window[0], window[1]));
  return fastest / generations_per_window;
}

int StepTimeline::first_unfinished_step() const {
  for (std::size_t step = 0; step < events_.size(); ++step)
    if (!events_[step][kEnd].query()) return static_cast<int>(step);
  return -1;  // or an unmarked run (no per-step events to ask)
}

double StepTimeline::measured_wall_ms(bool marked) const {
  return marked ? elapsed_ms(events_[settings_.warmup_steps][kStart], events_.back()[kEnd])
                : elapsed_ms(run_marks_[kMeasuredStart], run_marks_[kRunEnd]);
}

StepMarkTimes StepTimeline::marked_step_times(int step, StepWork work) const {
  const StepEvents& e = events_[step];
  const auto since_start = [&](Mark which) { return elapsed_ms(e[kStart], e[which]); };
  StepMarkTimes times;
  times.end = since_start(kEnd);
  if (settings_.timing == TimingMode::step) return times;  // only the step's boundaries were marked
  times.forward_end = since_start(kForwardEnd);
  if (!work.update) return times;
  times.backward_end = since_start(kBackwardEnd);
  if (!work.reduced) return times;
  times.allreduce_start = since_start(kAllreduceStart);
  times.allreduce_end = since_start(kAllreduceEnd);
  times.optimizer_start = since_start(kOptimizerStart);
  return times;
}

void StepTimeline::read_phase_times(RunRecord& record, bool marked, bool reduced) const {
  if (!marked) return read_unmarked_run(record);
  const bool phases = settings_.timing != TimingMode::step;
  for (int step = 0; step < record.total_steps; ++step) {
    const StepWork work = work_of_step(settings_, step, reduced);
    record_marked_step(record, step, marked_step_times(step, work), work, phases);
  }
}

void StepTimeline::read_unmarked_run(RunRecord& record) const {
  // Each part's mean step (warm-up or measured), less the bookkeeping and batch generation that a marked step leaves
  // before its start mark (timed alone after the run).
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
  record_unmarked_steps(record, warmup, warmup_mean, measured_mean);
}

}  // namespace mgpu
