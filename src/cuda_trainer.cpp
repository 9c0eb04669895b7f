// Purpose: CudaTrainer: one data-parallel training run on this rank's GPU, the gradient all-reduce on its own
// stream, and the phase times of MEASUREMENT.md read from CUDA events once the run is over.
#include "cuda_trainer.hpp"

#include <chrono>
#include <thread>

#include "cuda_check.hpp"
#include "mpi_check.hpp"

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
  if (world_size == 1) return nullptr;  // nothing to reduce; see reduce_gradients
  return std::make_unique<NcclCommunicator>(comm, device_ordinal);
}

}  // namespace

CudaTrainer::CudaTrainer(const TrainingSettings& settings, MPI_Comm comm, int device_ordinal)
    : settings_(settings),
      rank_(comm_rank(comm)),
      world_size_(comm_size(comm)),
      local_batch_(checked_local_batch(settings, world_size_)),
      device_ordinal_(select_device(device_ordinal)),
      nccl_(make_communicator(comm, world_size_, device_ordinal_)),
      model_(settings.model, local_batch_, compute_stream_.get()),
      losses_(static_cast<std::size_t>(settings.total_steps())),
      events_(static_cast<std::size_t>(settings.total_steps())),
      clock_sampler_(describe_gpu(device_ordinal_).pci_bus_id) {
  compute_stream_.synchronize();  // set-up work (the ones vector) done before the first run is timed
}

CudaTrainer::~CudaTrainer() = default;

RunRecord CudaTrainer::run(int run_index) {
  ScopedDevice device(device_ordinal_);
  const int steps = settings_.total_steps();
  RunRecord record(steps);

  // Fresh parameters and zero Adam moments, enqueued ahead of the first step (its start event comes after them).
  model_.initialize(settings_.seed, static_cast<std::uint64_t>(run_index));

  clock_sampler_.reset();

  // The whole run is enqueued without a single host synchronisation: a host wait between steps would idle the GPU
  // and put host latency into the step times. The host blocks at most when the launch queue is full, which does not
  // change what the events measure.
  for (int step = 0; step < steps; ++step) train_step(run_index, step);

  wait_sampling_clocks(events_.back().end);
  read_phase_times(record);

  const std::vector<float> losses = copy_to_host(losses_, compute_stream_.get());
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

void CudaTrainer::train_step(int run_index, int step) {
  const StepEvents& events = events_[step];
  const cudaStream_t compute = compute_stream_.get();
  // Rank r's contiguous slice of global batch `step`: the same samples whatever the number of ranks.
  const std::uint64_t first_sample =
      static_cast<std::uint64_t>(step) * settings_.global_batch + static_cast<std::uint64_t>(rank_) * local_batch_;

  // Data loading is not part of the step (MEASUREMENT.md: forward starts with the batch in place). The batch is
  // generated on the compute stream before `start` is recorded, so `start` fires only once it is there.
  model_.generate_batch(settings_.seed, first_sample);

  events.start.record(compute);
  forward(run_index, step, first_sample);
  events.forward_end.record(compute);  // forward phase = start -> here, loss and dL/dy included
  backward();
  events.backward_end.record(compute);  // backward phase = forward_end -> here: every gradient written
  reduce_gradients(events);
  update(step);
  events.end.record(compute);  // step = start -> here
}

void CudaTrainer::forward(int run_index, int step, std::uint64_t first_sample) {
  cpu::DropoutKey dropout;
  dropout.seed = settings_.seed;
  dropout.run = static_cast<std::uint64_t>(run_index);
  dropout.step = static_cast<std::uint64_t>(step);  // step index within the run, warm-up steps included
  dropout.first_sample = first_sample;
  dropout.drop_probability = static_cast<float>(settings_.model.dropout);
  model_.forward(dropout);
  model_.loss_and_gradient(losses_.data() + step);
}

void CudaTrainer::backward() { model_.backward(); }

void CudaTrainer::reduce_gradients(const StepEvents& events) {
  // One rank: nothing to reduce, and nothing is enqueued or recorded, so the single-GPU baseline carries no cost a
  // real single-GPU run would not have (each event record costs the host ~3 us, which shows in launch-bound steps).
  // read_phase_times then reports allreduce = exposed_comm = 0 and starts the optimizer at backward_end.
  if (!nccl_) return;
  const cudaStream_t comm = comm_stream_.get();
  // The communication stream starts only once backward has written the last gradient (a GPU-side wait, no host
  // involvement). allreduce_start is recorded after that wait, so the allreduce phase is the NCCL kernel itself,
  // including any time it spends waiting for a slower rank to arrive.
  comm_stream_.wait(events.backward_end.get());
  events.allreduce_start.record(comm);
  // One in-place average over the one contiguous gradient buffer: each rank's gradient is the mean over its local
  // batch, so their average is the gradient of the mean over the global batch, as on one GPU.
  MGPU_NCCL_CHECK(ncclAllReduce(model_.gradients(), model_.gradients(), model_.parameter_count(), ncclFloat, ncclAvg,
                                nccl_->get(), comm));
  events.allreduce_end.record(comm);
  // The optimizer must not read gradients before the reduction completes. exposed_comm = backward_end ->
  // allreduce_end is what the compute stream waits here; with a single reduction after backward nothing overlaps,
  // so it equals allreduce plus the stream hop (per-layer buckets launched during backward would hide part of it).
  compute_stream_.wait(events.allreduce_end.get());
  // Recorded on the compute stream after its wait: the optimizer phase starts when the compute stream could
  // actually proceed, not when the communication stream finished.
  events.optimizer_start.record(compute_stream_.get());
}

void CudaTrainer::update(int step) { model_.adam(settings_.adam, step + 1); }

void CudaTrainer::wait_sampling_clocks(const CudaEvent& last) {
  // Poll instead of blocking in cudaEventSynchronize, so the clocks can be sampled while the GPU works. The last
  // step's end event on the compute stream completes after everything of the run: the compute stream waited for
  // every all-reduce before its optimizer. At least one reading is taken, while the GPU still works on the run or
  // right after (clocks fall only after idle time); a reading taken before the run was enqueued could catch an idle
  // clock and flag a run as throttled that was not.
  for (;;) {
    clock_sampler_.sample();
    if (last.query()) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void CudaTrainer::read_phase_times(RunRecord& record) const {
  for (int step = 0; step < record.total_steps; ++step) {
    const StepEvents& e = events_[step];
    record.ms(Phase::forward, step) = elapsed_ms(e.start, e.forward_end);
    record.ms(Phase::backward, step) = elapsed_ms(e.forward_end, e.backward_end);
    // One rank (see reduce_gradients): no reduction, its phases are 0 and the optimizer follows backward directly.
    record.ms(Phase::allreduce, step) = nccl_ ? elapsed_ms(e.allreduce_start, e.allreduce_end) : 0.0;
    record.ms(Phase::exposed_comm, step) = nccl_ ? elapsed_ms(e.backward_end, e.allreduce_end) : 0.0;
    record.ms(Phase::optimizer, step) = elapsed_ms(nccl_ ? e.optimizer_start : e.backward_end, e.end);
    record.ms(Phase::step, step) = elapsed_ms(e.start, e.end);
  }
}

std::vector<float> CudaTrainer::parameters() const {
  ScopedDevice device(device_ordinal_);
  return model_.download_parameters();
}

}  // namespace mgpu
