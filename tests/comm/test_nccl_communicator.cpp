// Purpose: tests of the non-blocking NCCL communicator under `mpiexec -n 2`, one GPU per rank: every rank joins, a
// call NCCL leaves in progress (the first all-reduce sets up the connections) is finished before its result is used,
// and the bounded wait on the GPU sees the reduction's end. Skips, saying why, without two GPUs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "comm/mpi_context.hpp"
#include "comm/nccl_communicator.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"

namespace mgpu {
namespace {

std::string skip_reason(const MpiContext& mpi) {
  const int visible = visible_cuda_device_count();
  const long long fewest = allreduce_value(mpi, visible - mpi.local_rank, MPI_MIN, "every rank's GPU count");
  if (mpi.size < 2 || fewest < 1)
    return "needs 2 MPI ranks with a GPU each (mpiexec -n 2 on a 2-GPU machine); rank " + std::to_string(mpi.rank) +
           " of " + std::to_string(mpi.size) + " sees " + std::to_string(visible);
  return "";
}

TEST(NcclCommunicator, EveryRankJoinsAndAnAllReduceAveragesAcrossThem) {
  const MpiContext mpi = describe_mpi_job();
  const std::string reason = skip_reason(mpi);
  if (!reason.empty()) GTEST_SKIP() << reason;
  const NcclCommunicator nccl(mpi.comm, mpi.local_rank);
  EXPECT_EQ(nccl.rank(), mpi.rank);
  EXPECT_EQ(nccl.size(), mpi.size);
  EXPECT_NE(nccl.id_check().find("identical on " + std::to_string(mpi.size) + " ranks"), std::string::npos)
      << nccl.id_check();
  const CudaStream stream;
  // Rank r holds r + (i mod 1024) at element i: the average is (size - 1) / 2 + (i mod 1024), exact in fp32.
  constexpr std::size_t kCount = 1 << 20;  // 4 MiB: more than one chunk of NCCL's pipeline
  std::vector<float> values(kCount);
  for (std::size_t i = 0; i < kCount; ++i) values[i] = float(mpi.rank) + float(i % 1024);
  DeviceBuffer<float> buffer(kCount);
  copy_to_device(buffer, values, stream.get());
  for (int call = 0; call < 2; ++call) {  // the first sets up the connections, the second runs on them
    MGPU_NCCL_CHECK(ncclAllReduce(buffer.data(), buffer.data(), kCount, ncclFloat, ncclAvg, nccl.get(), stream.get()));
    const CudaEvent done(cudaEventDisableTiming);
    done.record(stream.get());
    wait_bounded_for(done, &nccl, "the test's all-reduce");
    const std::vector<float> averaged = copy_to_host(buffer, stream.get());
    // The first call leaves every rank the same average, which the second keeps.
    const float offset = float(mpi.size - 1) / 2.0f;
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < kCount; ++i) wrong += averaged[i] != offset + float(i % 1024);
    EXPECT_EQ(wrong, 0u) << "call " << call;
  }
  EXPECT_NO_THROW(nccl.check_async_error());
}

}  // namespace
}  // namespace mgpu
