// Purpose: back-end selection, trainer construction and per-rank hardware description (CUDA parts only in CUDA
// builds, so a machine without CUDA still builds and runs the CPU fallback).
#include "backend.hpp"

#include "cpu_trainer.hpp"
#include "error.hpp"
#include "mpi_check.hpp"

#if MGPU_HAVE_CUDA
#include "cuda_trainer.hpp"
#include "gpu_devices.hpp"
#endif

namespace mgpu {

const char* backend_name(Backend backend) { return backend == Backend::cuda ? "cuda" : "cpu"; }

BackendChoice choose_backend(DeviceChoice requested, const MpiContext& mpi) {
  if (requested == DeviceChoice::cpu) return {Backend::cpu, ""};
#if MGPU_HAVE_CUDA
  const int gpus_here = visible_cuda_device_count();
#else
  // Every rank runs the same binary, so every rank throws the same line.
  if (requested == DeviceChoice::cuda) throw UsageError("--device cuda: this build has no CUDA support (no nvcc at configure time)");
  const int gpus_here = 0;
#endif
  const int has_own_gpu = mpi.local_rank < gpus_here ? 1 : 0;
  int every_rank_has_gpu = 0;
  int most_gpus_on_a_host = 0;
  MGPU_MPI_CHECK(MPI_Allreduce(&has_own_gpu, &every_rank_has_gpu, 1, MPI_INT, MPI_MIN, mpi.comm));
  MGPU_MPI_CHECK(MPI_Allreduce(&gpus_here, &most_gpus_on_a_host, 1, MPI_INT, MPI_MAX, mpi.comm));
  if (every_rank_has_gpu) return {Backend::cuda, ""};
  if (requested == DeviceChoice::automatic && most_gpus_on_a_host == 0) {
    return {Backend::cpu,
            std::string(MGPU_HAVE_CUDA ? "no rank sees a GPU" : "this build has no CUDA support") +
                ": running the CPU FALLBACK (device = cpu). These are CPU timings, not GPU timings."};
  }
  std::string mine;
  if (!has_own_gpu) {
    mine = "--device " + std::string(device_choice_name(requested)) + ": rank " + std::to_string(mpi.rank) + " is local rank " +
           std::to_string(mpi.local_rank) + " on " + mpi.host + ", which has " + std::to_string(gpus_here) +
           " GPU(s); run one rank per GPU (or --device cpu)";
  }
  agree_or_throw(mpi, mine);
  return {Backend::cuda, ""};  // unreachable: some rank lacked a GPU, so agree_or_throw threw
}

std::unique_ptr<Trainer> make_trainer(Backend backend, const TrainingSettings& settings, const MpiContext& mpi) {
#if MGPU_HAVE_CUDA
  if (backend == Backend::cuda) return std::make_unique<CudaTrainer>(settings, mpi.comm, mpi.local_rank);
#endif
  MGPU_REQUIRE(backend == Backend::cpu, "this build has no CUDA support");
  return std::make_unique<CpuTrainer>(settings, mpi.comm);
}

RankHardware describe_rank_hardware(Backend backend, const MpiContext& mpi) {
  RankHardware hardware;
  if (backend != Backend::cuda) return hardware;
#if MGPU_HAVE_CUDA
  const GpuDescription gpu = describe_gpu(mpi.local_rank);
  hardware.gpu_name = gpu.name;
  hardware.gpu_uuid = gpu.uuid;
  hardware.pci_bus_id = gpu.pci_bus_id;
  hardware.max_sm_clock_mhz = gpu.max_sm_clock_mhz;
  hardware.max_memory_clock_mhz = gpu.max_memory_clock_mhz;
  // Every rank needs every rank's host and bus id: all-gather fixed-width "host" + "bus id" records.
  constexpr int kFieldWidth = 128;
  std::vector<char> mine(2 * kFieldWidth, '\0');
  mpi.host.copy(mine.data(), kFieldWidth - 1);
  gpu.pci_bus_id.copy(mine.data() + kFieldWidth, kFieldWidth - 1);
  std::vector<char> all(mine.size() * std::size_t(mpi.size));
  MGPU_MPI_CHECK(MPI_Allgather(mine.data(), 2 * kFieldWidth, MPI_CHAR, all.data(), 2 * kFieldWidth, MPI_CHAR,
                               mpi.comm));
  std::string topology;
  for (int r = 0; r < mpi.size; ++r) {
    if (r == mpi.rank) continue;
    const std::string peer_host(all.data() + std::size_t(r) * 2 * kFieldWidth);
    const std::string peer_bus_id(all.data() + std::size_t(r) * 2 * kFieldWidth + kFieldWidth);
    const std::string path = peer_host == mpi.host ? describe_peer_path(mpi.local_rank, peer_bus_id)
                                                   : "on host " + peer_host + ": network";
    topology += (topology.empty() ? "" : "; ") + ("rank " + std::to_string(r) + " " + path);
  }
  hardware.peer_topology = topology.empty() ? "single GPU" : topology;
#else
  (void)mpi;
#endif
  return hardware;
}

LibraryVersions library_versions(Backend backend) {
  LibraryVersions versions;
  versions.mpi = mpi_library_version();
#if MGPU_HAVE_CUDA
  if (backend == Backend::cuda) {
    const CudaLibraryVersions cuda = cuda_library_versions();
    versions.cuda_runtime = cuda.cuda_runtime;
    versions.cuda_driver = cuda.cuda_driver;
    versions.cublas = cuda.cublas;
    versions.nccl = cuda.nccl;
  }
#else
  (void)backend;
#endif
  return versions;
}

}  // namespace mgpu
