// Purpose: the CPU fallback trainer: the same model, data and step as the GPU path, on OpenBLAS, with gradients
// averaged by MPI_Allreduce and phases timed by the steady clock. A real, tested path: CI and laptops run it.
#pragma once

#include <mpi.h>

#include <vector>

#include "train/cpu_mlp.hpp"
#include "train/step_phases.hpp"
#include "train/trainer.hpp"

namespace mgpu {

class CpuTrainer final : public Trainer {
 public:
  // `comm` holds the ranks that train together; this rank trains on its slice of every global batch.
  CpuTrainer(const TrainingSettings& settings, MPI_Comm comm);
  RunRecord run(int run_index) override;
  std::vector<float> parameters() const override { return parameters_; }
  std::string device_kind() const override { return "cpu"; }
  std::string unique_id_check() const override { return unique_id_check_; }
  std::vector<float> parameters_after_steps(int steps) override;
  ReferenceRun reference_run(int steps) const override;

 private:
  void average_gradients();
  // The settings of a run of `steps` steps, all measured (what the math check trains).
  TrainingSettings settings_for_steps(int steps) const;
  struct StepMarks;  // when a step's phases ended (cpu_trainer.cpp)
  // One step of run `run_index` on the batch in place (first sample `first_sample`): forward, loss, backward, the
  // all-reduce and Adam where the step ends an accumulation group; the clock read between phases when `marked`.
  StepMarks train_step(int run_index, int step, std::uint64_t first_sample, bool marked, float* loss);
  static StepMarkTimes mark_times(const StepMarks& marks);

  TrainingSettings settings_;
  MPI_Comm comm_;
  int rank_ = 0;
  int ranks_ = 1;
  int local_batch_ = 0;
  bool corrupt_gemm_ = false;    // MGPU_FAULT_CORRUPT_GEMM
  std::string unique_id_check_;  // how rank 0's id reached the ranks (the NCCL id's path; "" with one rank)
  std::vector<float> parameters_, gradients_, first_moment_, second_moment_;
  std::vector<float> step_gradients_;  // with --accumulate K > 1: this step's gradient, added to gradients_
  std::vector<float> inputs_, targets_, grad_output_;
  cpu::MlpActivations<float> activations_;
};

}  // namespace mgpu
