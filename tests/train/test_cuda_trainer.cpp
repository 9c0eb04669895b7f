// Purpose: CudaTrainer on one GPU: set-up (warm-up steps, graph capture, step-level GEMM tuning, which replays the
// step 65 times from one reset of its counter) and a short run keep every loss inside the run's slots, for each way
// the step computes its loss (the MSE kernel, the fused output head), and every step's loss is written; and the math
// check of tf32x3 against the fp32 reference step within fp32's tolerance, its error printed beside fp32's and bf16's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>

#include "platform/gpu_devices.hpp"
#include "train/cuda_trainer.hpp"
#include "train/math_check.hpp"

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

// The math check as every measured configuration runs it (3 steps of the graph-captured step against the plain
// reference), at batch 1024 of both presets: tf32x3 within fp32's tolerance of the fp32 reference, each precision
// within its own; the errors side by side for docs/measurement.md's table of them.
TEST(CudaTrainerMathCheck, Tf32x3IsWithinFp32ToleranceBesideFp32AndBf16) {
  if (visible_cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  for (const char* model : {"medium", "large"}) {
    std::string line = std::string("[ measured ] math check, ") + model + " b1024:";
    for (Precision precision : {Precision::fp32, Precision::tf32x3, Precision::bf16}) {
      TrainingSettings settings;
      settings.model = preset_model(model);
      settings.global_batch = 1024;
      settings.warmup_steps = 1;
      settings.measured_steps = 3;
      settings.precision = precision;
      CudaTrainer trainer(settings, MPI_COMM_SELF, 0);
      ReferenceRuns references;
      const MathCheck check = check_math(trainer, settings, references);
      EXPECT_TRUE(check.within_tolerance(check.error))
          << model << " " << setting_name(precision) << ": error " << check.error << ", tolerance " << check.tolerance;
      if (precision == Precision::tf32x3) EXPECT_EQ(check.tolerance, kFp32Tolerance);
      line += std::string(" ") + setting_name(precision) + " " + std::to_string(check.error);
    }
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace
}  // namespace mgpu
