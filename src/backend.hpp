// Purpose: which back-end this job trains on (CUDA + NCCL or the CPU fallback), agreed by every rank, the trainer
// for it, and the hardware and library facts of each rank that the results record.
#pragma once

#include <memory>
#include <string>

#include "mpi_context.hpp"
#include "options.hpp"
#include "trainer.hpp"

namespace mgpu {

enum class Backend { cuda, cpu };
const char* backend_name(Backend backend);

struct BackendChoice {
  Backend backend = Backend::cpu;
  std::string notice;  // said loudly by rank 0 when auto fell back to the CPU
};

// Collective. auto: CUDA when every rank has a GPU of its own, the CPU when no rank sees any GPU, and an error when
// some do and some don't (more ranks on a host than GPUs is a misconfiguration, never a silent share).
BackendChoice choose_backend(DeviceChoice requested, const MpiContext& mpi);

// Collective (the CUDA path creates the NCCL communicator).
std::unique_ptr<Trainer> make_trainer(Backend backend, const TrainingSettings& settings, const MpiContext& mpi);

struct RankHardware {
  std::string gpu_name = "n/a";
  std::string gpu_uuid = "n/a";
  std::string pci_bus_id = "n/a";
  std::string peer_topology = "n/a";
  double max_sm_clock_mhz = 0;      // 0: unknown
  double max_memory_clock_mhz = 0;
};
// Collective: every rank learns the others' bus ids to describe its links to them.
RankHardware describe_rank_hardware(Backend backend, const MpiContext& mpi);

struct LibraryVersions {
  std::string cuda_runtime = "n/a", cuda_driver = "n/a", cublas = "n/a", nccl = "n/a", mpi;
};
LibraryVersions library_versions(Backend backend);

}  // namespace mgpu
