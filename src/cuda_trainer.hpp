// Purpose: the CUDA + NCCL training back-end: data-parallel steps on one GPU per rank, each phase timed with CUDA
// events as MEASUREMENT.md defines it, a whole run enqueued without host synchronisation.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda_mlp.hpp"
#include "cuda_resources.hpp"
#include "gpu_devices.hpp"
#include "nccl_communicator.hpp"
#include "trainer.hpp"

namespace mgpu {

class CudaTrainer final : public Trainer {
 public:
  // Collective over `comm` (NCCL set-up) when it has more than one rank. Rank r of N trains on the contiguous slice
  // [r*B/N, (r+1)*B/N) of every global batch B on GPU `device_ordinal`; B must be divisible by N.
  CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal);
  ~CudaTrainer() override;
  CudaTrainer(const CudaTrainer&) = delete;
  CudaTrainer& operator=(const CudaTrainer&) = delete;

  RunRecord run(int run_index) override;
  std::vector<float> parameters() const override;
  std::string device_kind() const override { return "cuda"; }

  int local_batch() const noexcept { return local_batch_; }

 private:
  // The events that bound the phases of one step; created once for every step of a run and reused by every run.
  // The three reduction events are recorded only with more than one rank.
  struct StepEvents {
    CudaEvent start;            // compute stream: the batch is in place, the step begins
    CudaEvent forward_end;      // compute stream: loss and dL/dy written
    CudaEvent backward_end;     // compute stream: last gradient written
    CudaEvent allreduce_start;  // communication stream: the reduction may begin
    CudaEvent allreduce_end;    // communication stream: reduced gradients complete
    CudaEvent optimizer_start;  // compute stream: after its wait for allreduce_end
    CudaEvent end;              // compute stream: parameters updated, the step is over
  };

  // One step as the reader expects it: forward, backward, reduce, update.
  void train_step(int run_index, int step);
  void forward(int run_index, int step, std::uint64_t first_sample);
  void backward();
  void reduce_gradients(const StepEvents& events);
  void update(int step);

  void wait_sampling_clocks(const CudaEvent& last);
  void read_phase_times(RunRecord& record) const;

  TrainingSettings settings_;
  int rank_;
  int world_size_;
  int local_batch_;
  int device_ordinal_;  // made current before any resource below is created
  CudaStream compute_stream_;
  CudaStream comm_stream_;
  std::unique_ptr<NcclCommunicator> nccl_;  // only with more than one rank
  CudaMlp model_;
  DeviceBuffer<float> losses_;  // [step] of the current run, copied back once it is over
  std::vector<StepEvents> events_;
  GpuClockSampler clock_sampler_;
};

}  // namespace mgpu
