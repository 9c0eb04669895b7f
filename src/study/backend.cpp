// Purpose: back-end and GPU selection, the memory check, trainer construction and the reset between configurations
// (CUDA parts only in CUDA builds, so a machine without CUDA still builds and runs the CPU fallback).
#include "study/backend.hpp"

#include <unistd.h>

#include <cstdio>

#include "platform/error.hpp"
#include "platform/mpi_check.hpp"
#include "train/cpu_trainer.hpp"

#if MGPU_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "platform/cuda_check.hpp"
#include "platform/gpu_devices.hpp"
#include "train/cuda_trainer.hpp"
#endif

namespace mgpu {
namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

// Bytes the trainers allocate for one rank: four parameter-sized buffers (parameters, gradients, Adam's two
// moments) and, per sample of the local batch, the input, every layer's output, the targets and every layer's output
// gradient (CudaMlp keeps one per layer); with --precision bf16 also 2-byte copies of the parameters, the inputs, the
// hidden activations and two gradient scratch rows of the widest layer; with tf32x3, 8-byte splits of the parameters,
// the inputs, the hidden activations and every layer's output gradient.
double training_bytes(const TrainingSettings& settings, int ranks) {
  const MlpSpec& model = settings.model;
  const double local_batch = double(settings.global_batch / ranks);
  double widths = 0.0;
  for (int width : model.widths) widths += width;
  const double output_gradients = widths - model.input_width();
  double bytes =
      4.0 * (4.0 * double(model.parameter_count()) + local_batch * (widths + model.output_width() + output_gradients));
  if (settings.precision == Precision::bf16)
    bytes += 2.0 * (double(model.parameter_count()) + local_batch * (widths + 2.0 * model.max_width()));
  if (settings.precision == Precision::tf32x3)
    bytes += 8.0 * (double(model.parameter_count()) + local_batch * (widths - model.output_width() + output_gradients));
  return bytes;
}

}  // namespace

const char* backend_name(Backend backend) { return backend == Backend::cuda ? "cuda" : "cpu"; }

BackendChoice choose_backend(DeviceChoice requested, const MpiContext& mpi) {
  if (requested == DeviceChoice::cpu) return {Backend::cpu, -1, ""};
#if MGPU_HAVE_CUDA
  const int gpus_here = visible_cuda_device_count();
  // The local rank's GPU when the host shows all of them; the only GPU when the launcher gave this rank its own.
  const int ordinal = gpus_here == 0 ? -1 : (mpi.local_rank < gpus_here ? mpi.local_rank : 0);
  const std::string uuid = ordinal >= 0 ? describe_gpu(ordinal).uuid : "";
#else
  // Every rank runs the same binary, so every rank throws the same line.
  if (requested == DeviceChoice::cuda) {
    throw UsageError("--device cuda: this build has no CUDA support (no nvcc at configure time)");
  }
  const int gpus_here = 0;
  const int ordinal = -1;
  const std::string uuid;
#endif
  const int has_gpu = ordinal >= 0 ? 1 : 0;
  const bool every_rank_has_gpu = allreduce_value(mpi, has_gpu, MPI_MIN, "every rank's GPU") != 0;
  const long long most_gpus_on_a_host = allreduce_value(mpi, gpus_here, MPI_MAX, "every rank's count of GPUs");
  if (requested == DeviceChoice::automatic && most_gpus_on_a_host == 0) {
    return {Backend::cpu, -1,
            std::string(MGPU_HAVE_CUDA ? "no rank sees a GPU" : "this build has no CUDA support") +
                ": running the CPU FALLBACK (device = cpu). These are CPU timings, not GPU timings."};
  }
  std::string mine;
  if (!every_rank_has_gpu && !has_gpu) {
    mine = "--device " + std::string(setting_name(requested)) + ": rank " + std::to_string(mpi.rank) + " on " +
           mpi.host + " sees no GPU" + (most_gpus_on_a_host > 0 ? " while other ranks do" : "") +
           "; run one rank per GPU (or --device cpu)";
  }
  agree_or_throw(mpi, mine);
  // One rank per GPU: the first rank that shares its GPU with a lower rank on the same host names both.
  const std::vector<std::string> uuids = allgather_strings(mpi, uuid);
  for (int r = 0; r < mpi.rank && mine.empty(); ++r) {
    if (mpi.hosts[r] == mpi.host && uuids[r] == uuid) {
      mine = "ranks " + std::to_string(r) + " and " + std::to_string(mpi.rank) + " on " + mpi.host +
             " would share GPU " + uuid + " (" + std::to_string(gpus_here) + " visible, " +
             std::to_string(mpi.local_size) + " ranks on the host); run one rank per GPU (or --device cpu)";
    }
  }
  agree_or_throw(mpi, mine);
  return {Backend::cuda, ordinal, ""};
}

void check_memory_fits(const BackendChoice& choice, const TrainingSettings& settings, int ranks,
                       const MpiContext& mpi) {
  const double needed = training_bytes(settings, ranks);
  double available = 0;
  std::string where;
#if MGPU_HAVE_CUDA
  if (choice.backend == Backend::cuda) {
    MGPU_CUDA_CHECK(cudaSetDevice(choice.device_ordinal));
    std::size_t free_bytes = 0, total_bytes = 0;
    MGPU_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    available = double(free_bytes);
    where = "free on the GPU of rank " + std::to_string(mpi.rank);
  }
#endif
  if (choice.backend == Backend::cpu) {
    available = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)) / mpi.local_size;
    where = "of host memory per rank on " + mpi.host;
  }
  std::string mine;
  if (needed > available) {
    mine = "--batch " + std::to_string(settings.global_batch) + " with model " + settings.model.widths_string() +
           " needs " + gigabytes(needed) + " per rank, more than the " + gigabytes(available) + " " + where;
  }
  agree_or_throw(mpi, mine);
}

std::unique_ptr<Trainer> make_trainer(const BackendChoice& choice, const TrainingSettings& settings,
                                      const MpiContext& mpi, GemmTunings& gemm_tunings) {
#if MGPU_HAVE_CUDA
  if (choice.backend == Backend::cuda)
    return std::make_unique<CudaTrainer>(settings, mpi.comm, choice.device_ordinal, &gemm_tunings);
#else
  (void)gemm_tunings;
#endif
  MGPU_REQUIRE(choice.backend == Backend::cpu, "this build has no CUDA support");
  return std::make_unique<CpuTrainer>(settings, mpi.comm);
}

void reset_device_between_configurations(const BackendChoice& choice, GemmTunings& gemm_tunings) {
  gemm_tunings.clear();
  if (choice.backend != Backend::cuda) return;
#if MGPU_HAVE_CUDA
  MGPU_CUDA_CHECK(cudaSetDevice(choice.device_ordinal));
  MGPU_CUDA_CHECK(cudaDeviceSynchronize());
  MGPU_CUDA_CHECK(cudaDeviceReset());
#endif
}

bool device_reset_follows(std::size_t index, std::size_t count) { return index + 1 < count; }

}  // namespace mgpu
