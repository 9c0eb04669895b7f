// Purpose: CudaTrainer on one GPU: set-up (warm-up steps, graph capture, step-level GEMM tuning, which replays the
// step 65 times from one reset of its counter) and a short run keep every loss inside the run's slots, for each way
// the step computes its loss (the MSE kernel, the fused output head), and every step's loss is written.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>

#include "platform/gpu_devices.hpp"
#include "train/cuda_trainer.hpp"

namespace mgpu {
namespace {

struct ShortRun {
  const char* model;
  int batch;
  bool fused_optimizer;  // with the output head where it serves (medium 32, large 64)
};

TEST(CudaTrainerLossSlots, SetUpAndRunWriteOnlyTheRunsSlots) {
  if (visible_cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  for (const ShortRun& c : {ShortRun{"medium", 32, false}, ShortRun{"medium", 32, true}, ShortRun{"large", 64, true},
                            ShortRun{"large", 128, false}}) {
    const std::string label =
        std::string(c.model) + " b" + std::to_string(c.batch) + (c.fused_optimizer ? " fused" : "");
    TrainingSettings settings;
    settings.model = preset_model(c.model);
    settings.global_batch = c.batch;
    settings.warmup_steps = 0;
    settings.measured_steps = 3;  // fewer slots than set-up's replays
    settings.graph = true;
    settings.gemm_tuning = GemmTuning::step;
    settings.fused_optimizer = c.fused_optimizer;
    // Set-up checks the guard after the loss array before it returns, each run when it reads the losses (LossBuffer).
    CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
    if (c.fused_optimizer) EXPECT_TRUE(trainer.fuses_output_head()) << label;
    const RunRecord record = trainer.run(0);
    ASSERT_EQ(record.loss.size(), 3u) << label;
    for (float loss : record.loss) EXPECT_TRUE(std::isfinite(loss) && loss > 0.0f) << label << ": " << loss;
  }
}

}  // namespace
}  // namespace mgpu
