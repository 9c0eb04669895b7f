// Purpose: each rank's facts (rank_facts.hpp); CUDA parts only in CUDA builds.
#include "study/rank_facts.hpp"

#include "platform/mpi_check.hpp"

#if MGPU_HAVE_CUDA
#include "platform/gpu_devices.hpp"
#endif

namespace mgpu {

RankHardware describe_rank_hardware(const BackendChoice& choice, const MpiContext& mpi) {
  RankHardware hardware;
  if (choice.backend != Backend::cuda) return hardware;
#if MGPU_HAVE_CUDA
  const GpuDescription gpu = describe_gpu(choice.device_ordinal);
  hardware.gpu_name = gpu.name;
  hardware.gpu_uuid = gpu.uuid;
  hardware.pci_bus_id = gpu.pci_bus_id;
  hardware.max_sm_clock_mhz = gpu.max_sm_clock_mhz;
  hardware.max_memory_clock_mhz = gpu.max_memory_clock_mhz;
  // Every rank needs every rank's bus id to describe its path to each peer.
  const std::vector<std::string> bus_ids = allgather_strings(mpi, gpu.pci_bus_id);
  std::string topology;
  for (int r = 0; r < mpi.size; ++r) {
    if (r == mpi.rank) continue;
    const std::string path = mpi.hosts[r] == mpi.host ? describe_peer_path(choice.device_ordinal, bus_ids[r])
                                                      : "on host " + mpi.hosts[r] + ": network";
    topology += (topology.empty() ? "" : "; ") + ("rank " + std::to_string(r) + " " + path);
  }
  hardware.peer_topology = topology.empty() ? "single GPU" : topology;
#else
  (void)mpi;
#endif
  return hardware;
}

std::vector<RankHardware> gather_rank_hardware(const MpiContext& mpi, const RankHardware& mine) {
  const std::vector<std::string> names = allgather_strings(mpi, mine.gpu_name);
  const std::vector<std::string> uuids = allgather_strings(mpi, mine.gpu_uuid);
  const std::vector<std::string> bus_ids = allgather_strings(mpi, mine.pci_bus_id);
  const std::vector<std::string> topologies = allgather_strings(mpi, mine.peer_topology);
  const std::vector<double> max_sm = allgather_doubles(mpi, mine.max_sm_clock_mhz);
  const std::vector<double> max_memory = allgather_doubles(mpi, mine.max_memory_clock_mhz);
  std::vector<RankHardware> all(names.size());
  for (std::size_t r = 0; r < all.size(); ++r)
    all[r] = RankHardware{names[r], uuids[r], bus_ids[r], topologies[r], max_sm[r], max_memory[r]};
  return all;
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
