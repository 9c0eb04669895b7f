// Purpose: which back-end this job trains on (CUDA + NCCL or the CPU fallback) and on which GPU, agreed by every
// rank; whether a configuration fits; the trainer for it; the reset between configurations.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "comm/mpi_context.hpp"
#include "train/gemm/gemm_tunings.hpp"
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

// Collective (the CUDA path creates the NCCL communicator). The trainer's GEMMs tune into the job's `gemm_tunings`.
std::unique_ptr<Trainer> make_trainer(const BackendChoice& choice, const TrainingSettings& settings,
                                      const MpiContext& mpi, GemmTunings& gemm_tunings);

// Between the configurations of a sweep, once this rank's trainer is gone: ends the CUDA context of its GPU
// (cudaDeviceReset), so the next configuration allocates on a fresh context as the first one does, and clears the
// job's GEMM tunings, so that it tunes its own (each trial is its own set-up and tuning). Without the reset every
// configuration after the first ran up to 8% slower on 2 x H200 (docs/measurement.md, "Configuration order"). No-op
// on the CPU fallback.
void reset_device_between_configurations(const BackendChoice& choice, GemmTunings& gemm_tunings);

// Whether configuration `index` (from 0) of a job's `count` is followed by that reset: every one but the last, which
// the process's end follows.
bool device_reset_follows(std::size_t index, std::size_t count);
}  // namespace mgpu
