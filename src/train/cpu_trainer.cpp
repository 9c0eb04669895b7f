// Purpose: CPU fallback training loop with steady-clock timings (docs/measurement.md phases, no overlap on CPU), in
// every --timing mode of the CUDA trainer.
#include "train/cpu_trainer.hpp"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "comm/mpi_context.hpp"
#include "comm/unique_id.hpp"
#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/mpi_check.hpp"
#include "train/float64_reference.hpp"
#include "train/math_check.hpp"
#include "train/step_phases.hpp"

namespace mgpu {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// OpenBLAS starts one thread per core in every process; with several ranks on a node they would fight over the
// cores and time each other's spinning. Give each rank its share. Looked up at run time because the BLAS behind
// cblas.h may not be OpenBLAS (then this is a no-op).
void share_blas_threads(MPI_Comm comm) {
  using SetThreads = void (*)(int);
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (set_threads == nullptr) return;
  const int local_size = place_on_host(comm).local_size;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  set_threads(std::max(1, cores / local_size));
}

double peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

}  // namespace

CpuTrainer::CpuTrainer(const TrainingSettings& settings, MPI_Comm comm) : settings_(settings), comm_(comm) {
  MGPU_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  MGPU_MPI_CHECK(MPI_Comm_size(comm_, &ranks_));
  MGPU_REQUIRE(settings_.global_batch % ranks_ == 0, "global batch must be divisible by the number of ranks");
  local_batch_ = settings_.global_batch / ranks_;
  const std::size_t count = settings_.model.parameter_count();
  parameters_.resize(count);
  gradients_.resize(count);
  first_moment_.resize(count);
  second_moment_.resize(count);
  inputs_.resize(std::size_t(local_batch_) * settings_.model.input_width());
  targets_.resize(std::size_t(local_batch_) * settings_.model.output_width());
  grad_output_.resize(targets_.size());
  if (settings_.accumulate_steps > 1) step_gradients_.resize(count);
  share_blas_threads(comm_);
  // The math check's fault hook: the first sample's output-layer product zeroed in every step. Read once.
  corrupt_gemm_ = gemm_corruption_requested();
  // Where the GPU path hands NCCL's unique id to the ranks, the CPU fallback hands an id of its own on the same path,
  // so that a job across nodes checks it without GPUs (NCCL's ids are 128 bytes).
  if (ranks_ > 1) {
    unsigned char id[128] = {};
    if (rank_ == 0) fill_random_id(id, sizeof id);
    unique_id_check_ = broadcast_checked_id(id, sizeof id, comm_, "unique id");
  }
}

void CpuTrainer::average_gradients() {
  // Sum then scale: MPI has no average; dividing by N after the sum matches ncclAvg on the GPU path.
  // Non-blocking and polled under the watchdog: a peer that stops (dead, stopped, wedged) must not hold this rank
  // in the collective forever.
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, gradients_.data(), static_cast<int>(gradients_.size()), MPI_FLOAT,
                                MPI_SUM, comm_, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "the gradient all-reduce (MPI_Iallreduce)"));
  const float scale = 1.0f / static_cast<float>(ranks_);
  for (float& g : gradients_) g *= scale;
}

TrainingSettings CpuTrainer::settings_for_steps(int steps) const {
  require_steps_of_a_run(settings_, steps);
  TrainingSettings settings = settings_;
  settings.warmup_steps = 0;
  settings.measured_steps = steps;
  return settings;
}

std::vector<float> CpuTrainer::parameters_after_steps(int steps) {
  // The step run() trains, over fewer steps: the run's settings are swapped for the call.
  const TrainingSettings measured = settings_;
  settings_ = settings_for_steps(steps);
  try {
    run(0);
  } catch (...) {
    settings_ = measured;
    throw;
  }
  settings_ = measured;
  return parameters_;
}

Trainer::ReferenceRun CpuTrainer::reference_run(int steps) const {
  ReferenceRun reference;
  reference.initial.resize(settings_.model.parameter_count());
  cpu::initialize_parameters(settings_.model, settings_.seed, 0, reference.initial.data());
  reference.trained = float64_reference::training_run(settings_for_steps(steps), 0);
  return reference;
}

struct CpuTrainer::StepMarks {
  Clock::time_point start, forward_end, backward_end, allreduce_end, end;  // all unset in an unmarked step
  StepWork work;                                                           // whether it updated and reduced
};

// The marks as times from the step's start. The CPU reduces right after backward and updates right after the
// reduction, so its reduction starts at backward's end (all of it exposed) and its optimizer at the reduction's end.
StepMarkTimes CpuTrainer::mark_times(const StepMarks& marks) {
  StepMarkTimes times;
  times.forward_end = elapsed_ms(marks.start, marks.forward_end);
  times.backward_end = elapsed_ms(marks.start, marks.backward_end);
  times.allreduce_start = times.backward_end;
  times.allreduce_end = elapsed_ms(marks.start, marks.allreduce_end);
  times.optimizer_start = times.allreduce_end;
  times.end = elapsed_ms(marks.start, marks.end);
  return times;
}

CpuTrainer::StepMarks CpuTrainer::train_step(int run_index, int step, std::uint64_t first_sample, bool marked,
                                             float* loss) {
  const MlpSpec& model = settings_.model;
  const auto now_if_marked = [marked] { return marked ? Clock::now() : Clock::time_point{}; };
  const cpu::DropoutKey dropout{settings_.seed, std::uint64_t(run_index), std::uint64_t(step), first_sample,
                                static_cast<float>(model.dropout)};
  StepMarks marks;
  marks.start = now_if_marked();
  cpu::mlp_forward(model, parameters_.data(), inputs_.data(), local_batch_, dropout, activations_);
  if (corrupt_gemm_) std::fill_n(activations_.output.begin(), model.output_width(), 0.0f);
  *loss = cpu::mse_loss_and_gradient(activations_.output.data(), targets_.data(), targets_.size(), grad_output_.data());
  marks.forward_end = now_if_marked();
  // Gradient accumulation: the first step of a group writes the buffer, the others add to it.
  const bool first_of_group = settings_.starts_accumulation(step);
  marks.work = work_of_step(settings_, step, ranks_ > 1);
  cpu::mlp_backward(model, parameters_.data(), inputs_.data(), local_batch_, activations_, grad_output_.data(),
                    static_cast<float>(model.dropout), first_of_group ? gradients_.data() : step_gradients_.data());
  if (!first_of_group) {
    for (std::size_t i = 0; i < gradients_.size(); ++i) gradients_[i] += step_gradients_[i];
  }
  marks.backward_end = now_if_marked();
  // One rank has nothing to reduce; the phase is then recorded as zero rather than as a no-op call's cost.
  if (marks.work.reduced) average_gradients();
  marks.allreduce_end = now_if_marked();
  if (marks.work.update) {
    // The mean of the K accumulated gradients (K = 1: the gradient as it is).
    if (settings_.accumulate_steps > 1) {
      const float scale = 1.0f / static_cast<float>(settings_.accumulate_steps);
      for (float& g : gradients_) g *= scale;
    }
    cpu::adam_update(settings_.adam, (step + 1) / settings_.accumulate_steps, parameters_.size(), parameters_.data(),
                     gradients_.data(), first_moment_.data(), second_moment_.data());
  }
  marks.end = now_if_marked();
  return marks;
}

RunRecord CpuTrainer::run(int run_index) {
  const MlpSpec& model = settings_.model;
  RunRecord record(settings_.total_steps());
  cpu::initialize_parameters(model, settings_.seed, run_index, parameters_.data());
  std::fill(first_moment_.begin(), first_moment_.end(), 0.0f);
  std::fill(second_moment_.begin(), second_moment_.end(), 0.0f);

  // --timing (trainer.hpp): a run that marks nothing reads the clock only around each batch generation (outside the
  // step) and at the boundaries of its warm-up and measured parts; its steps get their part's mean step time with the
  // generation subtracted, as the CUDA trainer's do. Otherwise the clock marks the phases; with --timing step only the
  // step time is kept.
  const bool unmarked = settings_.marks_nothing(run_index);
  const bool phases = settings_.marks_phases(run_index);
  Clock::time_point measured_start{};
  Clock::time_point part_start = Clock::now();
  double generation_ms = 0;  // of the current part (unmarked runs)
  double warmup_step_ms = 0;
  for (int step = 0; step < settings_.total_steps(); ++step) {
    watchdog::set_step(step);
    if (unmarked && step == settings_.warmup_steps) {
      const Clock::time_point boundary = Clock::now();
      if (step > 0) warmup_step_ms = (elapsed_ms(part_start, boundary) - generation_ms) / step;
      part_start = measured_start = boundary;
      generation_ms = 0;
    }
    const std::uint64_t first_sample =
        std::uint64_t(step) * settings_.global_batch + std::uint64_t(rank_) * local_batch_;
    // Data "loading" is outside the step, as on the GPU path: the step starts with the batch in place.
    const Clock::time_point generation_start = unmarked ? Clock::now() : Clock::time_point{};
    cpu::generate_samples(settings_.seed, first_sample, local_batch_, model.input_width(), model.output_width(),
                          inputs_.data(), targets_.data());
    if (unmarked) generation_ms += elapsed_ms(generation_start, Clock::now());

    float loss = 0;
    const StepMarks marks = train_step(run_index, step, first_sample, !unmarked, &loss);
    record.loss[step] = loss;
    if (unmarked) continue;
    if (step == settings_.warmup_steps) measured_start = marks.start;
    record_marked_step(record, step, mark_times(marks), marks.work, phases);
  }
  // Includes the data generation between measured steps (the GPU path's wall span includes its launch gaps).
  record.measured_wall_ms = elapsed_ms(measured_start, Clock::now());
  record.phases_marked = phases;
  if (unmarked) {
    const int measured = std::max(1, settings_.measured_steps);
    record.batch_generation_ms = generation_ms / measured;
    const double measured_step_ms = (record.measured_wall_ms - generation_ms) / measured;
    record_unmarked_steps(record, settings_.warmup_steps, warmup_step_ms, measured_step_ms);
  }
  record.memory_peak_bytes = peak_resident_bytes();
  return record;
}

}  // namespace mgpu
