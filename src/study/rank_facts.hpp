// Purpose: the facts of each rank that the results record: its GPU, that GPU's links to the other ranks' GPUs, its
// clocks, and the library versions the job runs with.
#pragma once

#include <string>
#include <vector>

#include "comm/mpi_context.hpp"
#include "results/results_schema.hpp"
#include "study/backend.hpp"

namespace mgpu {

struct RankHardware {
  std::string gpu_name = "n/a";
  std::string gpu_uuid = "n/a";
  std::string pci_bus_id = "n/a";
  std::string peer_topology = "n/a";
  double max_sm_clock_mhz = 0;  // 0: unknown
  double max_memory_clock_mhz = 0;
};
// Collective: every rank learns the others' hosts and bus ids to describe its links to them.
RankHardware describe_rank_hardware(const BackendChoice& choice, const MpiContext& mpi);
// Collective: every rank learns every rank's description, in rank order.
std::vector<RankHardware> gather_rank_hardware(const MpiContext& mpi, const RankHardware& mine);

struct LibraryVersions {
  std::string cuda_runtime = "n/a", cuda_driver = "n/a", cublas = "n/a", nccl = "n/a", mpi;
};
LibraryVersions library_versions(Backend backend);

// Fills what a training configuration (results_schema::ConfigurationMetadata) and a standalone measurement
// (results_schema::MeasurementConditions) both record under the same attribute names: library versions, and the host,
// GPU and peer topology of each of the first `ranks` ranks (`hosts` and `hardware` in rank order, at least `ranks`
// long).
inline void record_ranks_and_libraries(results_schema::RanksAndLibraries& recorded, const LibraryVersions& versions,
                                       const std::vector<std::string>& hosts, const std::vector<RankHardware>& hardware,
                                       int ranks) {
  recorded.cuda_runtime_version = versions.cuda_runtime;
  recorded.cuda_driver_version = versions.cuda_driver;
  recorded.cublas_version = versions.cublas;
  recorded.nccl_version = versions.nccl;
  recorded.mpi_library_version = versions.mpi;
  recorded.hosts.assign(hosts.begin(), hosts.begin() + ranks);
  for (int r = 0; r < ranks; ++r) {
    recorded.gpu_names.push_back(hardware[r].gpu_name);
    recorded.gpu_uuids.push_back(hardware[r].gpu_uuid);
    recorded.gpu_pci_bus_ids.push_back(hardware[r].pci_bus_id);
    recorded.peer_topology.push_back(hardware[r].peer_topology);
  }
}

}  // namespace mgpu
