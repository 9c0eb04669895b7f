// Purpose: MpiAllreduceEngine: the all-reduce sweep on the CPU fallback, so the subcommand runs and is tested without
// GPUs. MPI has no average, so the CPU training path (and this check) sums; fp32 only.
#include "probes/mpi_allreduce_engine.hpp"

#include <chrono>
#include <limits>
#include <vector>

#include "comm/watchdog.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

class MpiAllreduceEngine final : public AllreduceEngine {
 public:
  MpiAllreduceEngine(const MpiContext& mpi, std::size_t max_elements)
      : mpi_(mpi), send_(max_elements), receive_(max_elements) {}

  double time_back_to_back(std::size_t elements, int warmup, int iterations) override {
    start_together(elements, warmup);
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < iterations; ++i) reduce_in_place(elements);
    return ms_since(start) / iterations;
  }

  double time_each(std::size_t elements, int warmup, int iterations) override {
    start_together(elements, warmup);
    double total = 0;
    for (int i = 0; i < iterations; ++i) {
      const Clock::time_point start = Clock::now();
      reduce_in_place(elements);
      total += ms_since(start);
    }
    return total / iterations;
  }

  long long check(std::size_t elements) override {
    allreduce_pattern::fill(AllreduceDtype::fp32, mpi_.rank, elements, send_.data());
    std::fill_n(receive_.begin(), elements, std::numeric_limits<float>::quiet_NaN());
    // Untimed, so bounded by the watchdog like every other wait (the timed calls block: polling would change them).
    MPI_Request request = MPI_REQUEST_NULL;
    MGPU_MPI_CHECK(MPI_Iallreduce(send_.data(), receive_.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM,
                                  mpi_.comm, &request));
    MGPU_MPI_CHECK(wait_bounded(request, "the data check's all-reduce (MPI_Iallreduce)"));
    return allreduce_pattern::count_wrong(AllreduceDtype::fp32, mpi_.size, elements, receive_.data(), false);
  }

  std::string timed_operation() const override { return "MPI_Allreduce MPI_SUM fp32, in place (MPI_IN_PLACE)"; }
  std::string data_check() const override {
    return "MPI_SUM out of place on small integers (exact): every element compared, output poisoned with NaN first";
  }

 private:
  void reduce_in_place(std::size_t elements) {
    MGPU_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, receive_.data(), static_cast<int>(elements), MPI_FLOAT, MPI_SUM, mpi_.comm));
  }
  // The timed buffer holds the pattern, never zeros; the warm-up and a barrier line the ranks up.
  void start_together(std::size_t elements, int warmup) {
    allreduce_pattern::fill(AllreduceDtype::fp32, mpi_.rank, elements, receive_.data());
    for (int i = 0; i < warmup; ++i) reduce_in_place(elements);
    line_up(mpi_, "every rank to start the timed all-reduces");
  }

  MpiContext mpi_;
  std::vector<float> send_;
  std::vector<float> receive_;
};

}  // namespace

std::unique_ptr<AllreduceEngine> make_mpi_allreduce_engine(const MpiContext& mpi, std::size_t max_elements) {
  return std::make_unique<MpiAllreduceEngine>(mpi, max_elements);
}

}  // namespace mgpu
