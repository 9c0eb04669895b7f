// Purpose: which back-end this job trains on (CUDA + NCCL or the CPU fallback) and on which GPU, agreed by every
// rank; the trainer for it; and the hardware and library facts of each rank that the results record.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"
#include "comm/run_conditions.hpp"
#include "train/trainer.hpp"

namespace mgpu {

enum class Backend { cuda, cpu };
const char* backend_name(Backend backend);

struct BackendChoice {
  Backend backend = Backend::cpu;
  int device_ordinal = -1;  // this rank's GPU (CUDA ordinal as this process sees it); -1 on the CPU
  std::string notice;       // said loudly by rank 0 when auto fell back to the CPU
};

// Collective. Each rank takes the GPU of its local rank, or its only visible GPU (a launcher that gives every rank
// its own CUDA_VISIBLE_DEVICES). auto: CUDA when every rank has a GPU, the CPU when no rank sees any, an error when
// some do and some don't. Two ranks on one GPU (same UUID on the same host) are an error, never a silent share.
BackendChoice choose_backend(DeviceChoice requested, const MpiContext& mpi);

// Collective: refuses (UsageError naming --batch and the model) a configuration whose buffers cannot fit in any
// rank's device memory (GPU) or the host's memory (CPU), before anything is allocated. `ranks`: how many ranks share
// the global batch (a sweep checks every configuration up front over the whole job).
void check_memory_fits(const BackendChoice& choice, const TrainingSettings& settings, int ranks, const MpiContext& mpi);

// Collective (the CUDA path creates the NCCL communicator).
std::unique_ptr<Trainer> make_trainer(const BackendChoice& choice, const TrainingSettings& settings,
                                      const MpiContext& mpi);

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
// Between the configurations of a sweep, once this rank's trainer is gone: ends the CUDA context of its GPU
// (cudaDeviceReset), so the next configuration allocates on a fresh context as the first one does, and forgets the
// process's GEMM tunings, so that it tunes its own (each trial is its own set-up and tuning). Without the reset every
// configuration after the first ran 4-8% slower (docs/measurement.md, "Configuration order"). No-op on the CPU
// fallback.
void reset_device_between_configurations(const BackendChoice& choice);
// Collective: every rank learns every rank's description, in rank order.
std::vector<RankHardware> gather_rank_hardware(const MpiContext& mpi, const RankHardware& mine);

struct LibraryVersions {
  std::string cuda_runtime = "n/a", cuda_driver = "n/a", cublas = "n/a", nccl = "n/a", mpi;
};
LibraryVersions library_versions(Backend backend);

// Fills what a training configuration (results_schema::ConfigurationMetadata) and a standalone measurement
// (results_schema::MeasurementConditions) both record under the same attribute names: the rank count, library
// versions, NCCL_ALGO / NCCL_PROTO as recorded, and the host, GPU and peer topology of each of the first `ranks` ranks
// (`hosts` and `hardware` in rank order, at least `ranks` long).
template <typename Recorded>
void record_ranks_and_libraries(Recorded& recorded, const LibraryVersions& versions,
                                const std::vector<std::string>& hosts, const std::vector<RankHardware>& hardware,
                                int ranks) {
  recorded.ranks = ranks;
  recorded.nccl_algo = nccl_variable_or_default("NCCL_ALGO");
  recorded.nccl_proto = nccl_variable_or_default("NCCL_PROTO");
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
