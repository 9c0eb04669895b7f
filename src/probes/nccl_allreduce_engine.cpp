// Purpose: NcclAllreduceEngine: nccl-tests' way of timing an all-reduce (N launches back-to-back between two events on
// the stream), each all-reduce timed alone as the training step does, and exact checks of ncclSum and ncclAvg.
#include "probes/nccl_allreduce_engine.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <vector>

#include "comm/nccl_communicator.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {
namespace {

ncclDataType_t nccl_type(AllreduceDtype dtype) { return dtype == AllreduceDtype::bf16 ? ncclBfloat16 : ncclFloat; }

// Makes the GPU current and checks, on every rank together, that the two buffers fit; returns the ordinal so that
// every member initialised after it lives on that device.
int select_device_with_room(const MpiContext& mpi, int ordinal, std::size_t bytes) {
  MGPU_CUDA_CHECK(cudaSetDevice(ordinal));
  std::size_t free_bytes = 0, total_bytes = 0;
  MGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Two message buffers, plus room for NCCL's own buffers and the CUDA context.
  const std::size_t needed = 2 * bytes + (512u << 20);
  std::string mine;
  if (needed > free_bytes)
    mine = "--max-bytes: two buffers of " + std::to_string(bytes) + " bytes need more than the " +
           std::to_string(free_bytes) + " bytes free on the GPU of rank " + std::to_string(mpi.rank);
  agree_or_throw(mpi, mine);
  return ordinal;
}

class NcclAllreduceEngine final : public AllreduceEngine {
 public:
  NcclAllreduceEngine(const MpiContext& mpi, int ordinal, AllreduceDtype dtype, std::size_t max_elements,
                      int max_iterations)
      : mpi_(mpi),
        dtype_(dtype),
        element_bytes_(allreduce_dtype_bytes(dtype)),
        device_(select_device_with_room(mpi, ordinal, max_elements * element_bytes_)),
        nccl_(mpi.comm, device_),
        send_(max_elements * element_bytes_),
        receive_(max_elements * element_bytes_),
        host_(max_elements * element_bytes_),
        starts_(static_cast<std::size_t>(max_iterations)),
        ends_(static_cast<std::size_t>(max_iterations)) {}

  double time_back_to_back(std::size_t elements, int warmup, int iterations) override {
    start_together(elements, warmup);
    // nccl-tests' measure: the launches follow each other with no host wait, so the time per all-reduce is what
    // the GPUs and links sustain, launch overhead hidden behind the previous all-reduce.
    begin_.record(stream_.get());
    for (int i = 0; i < iterations; ++i) reduce_in_place(elements);
    end_.record(stream_.get());
    wait_bounded_for(end_, &nccl_, "the timed all-reduces on the GPU");
    return elapsed_ms(begin_, end_) / iterations;
  }

  double time_each(std::size_t elements, int warmup, int iterations) override {
    start_together(elements, warmup);
    // Each all-reduce between its own events, as the step's allreduce phase: the events add a little per op, and
    // the time includes any wait for the other rank inside the collective.
    for (int i = 0; i < iterations; ++i) {
      starts_[i].record(stream_.get());
      reduce_in_place(elements);
      ends_[i].record(stream_.get());
    }
    wait_bounded_for(ends_[iterations - 1], &nccl_, "the timed all-reduces on the GPU");
    double total = 0;
    for (int i = 0; i < iterations; ++i) total += elapsed_ms(starts_[i], ends_[i]);
    return total / iterations;
  }

  long long check(std::size_t elements) override {
    const std::size_t bytes = elements * element_bytes_;
    const cudaStream_t stream = stream_.get();
    allreduce_pattern::fill(dtype_, mpi_.rank, elements, host_.data());
    MGPU_CUDA_CHECK(cudaMemcpyAsync(send_.data(), host_.data(), bytes, cudaMemcpyHostToDevice, stream));
    long long wrong = 0;
    // 1. ncclSum out of place: small integers, so every element must be exact. The output is poisoned with 0xFF
    //    bytes (NaN in fp32 and bf16) first, so an element the collective did not write fails.
    MGPU_CUDA_CHECK(cudaMemsetAsync(receive_.data(), 0xFF, bytes, stream));
    MGPU_NCCL_CHECK(
        ncclAllReduce(send_.data(), receive_.data(), elements, nccl_type(dtype_), ncclSum, nccl_.get(), stream));
    wrong += compare(elements, false);
    // 2. ncclAvg in place, the training step's operation: exact for a power-of-two number of ranks.
    MGPU_CUDA_CHECK(cudaMemsetAsync(receive_.data(), 0xFF, bytes, stream));
    MGPU_CUDA_CHECK(cudaMemcpyAsync(receive_.data(), send_.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    MGPU_NCCL_CHECK(
        ncclAllReduce(receive_.data(), receive_.data(), elements, nccl_type(dtype_), ncclAvg, nccl_.get(), stream));
    wrong += compare(elements, true);
    return wrong;
  }

  std::string timed_operation() const override {
    return std::string("ncclAllReduce ncclAvg ") + setting_name(dtype_) + ", in place (the training step's)";
  }
  std::string data_check() const override {
    return "ncclSum out of place and ncclAvg in place on small integers per rank (the sum is exact; so is the "
           "average over a power-of-two number of ranks, else within 4 ulp x ranks): every element compared on the "
           "host, output poisoned with NaN first";
  }

 private:
  // Everything enqueued on the stream so far, waited for under the watchdog (the all-reduces in it never end when a
  // peer has stalled).
  void wait_for_stream(const std::string& waiting_for) {
    stream_done_.record(stream_.get());
    wait_bounded_for(stream_done_, &nccl_, waiting_for);
  }
  void reduce_in_place(std::size_t elements) {
    MGPU_NCCL_CHECK(ncclAllReduce(receive_.data(), receive_.data(), elements, nccl_type(dtype_), ncclAvg, nccl_.get(),
                                  stream_.get()));
  }
  // The timed buffer holds the pattern (never zeros); an average of averages stays bounded however often it runs.
  void start_together(std::size_t elements, int warmup) {
    MGPU_CUDA_CHECK(cudaMemcpyAsync(receive_.data(), send_.data(), elements * element_bytes_, cudaMemcpyDeviceToDevice,
                                    stream_.get()));
    for (int i = 0; i < warmup; ++i) reduce_in_place(elements);
    wait_for_stream("the warm-up all-reduces on the GPU");
    // Both ranks leave the barrier together, so neither rank's first timed all-reduce waits for a late peer.
    line_up(mpi_, "every rank to start the timed all-reduces");
  }
  long long compare(std::size_t elements, bool average) {
    MGPU_CUDA_CHECK(cudaMemcpyAsync(host_.data(), receive_.data(), elements * element_bytes_, cudaMemcpyDeviceToHost,
                                    stream_.get()));
    wait_for_stream("the checked all-reduces on the GPU");
    return allreduce_pattern::count_wrong(dtype_, mpi_.size, elements, host_.data(), average);
  }

  MpiContext mpi_;
  AllreduceDtype dtype_;
  std::size_t element_bytes_;
  int device_;  // current before any resource below is created
  CudaStream stream_;
  NcclCommunicator nccl_;
  DeviceBuffer<unsigned char> send_;
  DeviceBuffer<unsigned char> receive_;
  std::vector<unsigned char> host_;
  CudaEvent begin_, end_;
  CudaEvent stream_done_{cudaEventDisableTiming};
  std::vector<CudaEvent> starts_, ends_;
};

}  // namespace

std::unique_ptr<AllreduceEngine> make_nccl_allreduce_engine(const MpiContext& mpi, int device_ordinal,
                                                            AllreduceDtype dtype, std::size_t max_elements,
                                                            int max_iterations) {
  return std::make_unique<NcclAllreduceEngine>(mpi, device_ordinal, dtype, max_elements, max_iterations);
}

}  // namespace mgpu
