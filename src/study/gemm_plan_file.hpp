// Purpose: --gemm-plan FILE: the GEMM plan each configuration of a job runs instead of tuning its own, taken from the
// configuration of the same name in an earlier job's results file (its gemm_choices), and refused where that job ran
// on another GPU model, driver or cuBLAS, for which the plan says nothing.
#pragma once

#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "train/gemm/gemm_plan.hpp"

namespace mgpu {

// What a plan is keyed by: the candidates cuBLASLt offers and how fast each runs depend on all three.
struct PlanMachine {
  std::string gpu_name;
  std::string cuda_driver_version;
  std::string cublas_version;
};

// For each of `names` (configurations of this job, trials included), the plan of `file`'s configuration of the same
// name up to the trial: the plan most of its trials ran, the earliest among equals. UsageError naming the file and
// the configuration when the file has none of that name, recorded no plan (the CPU fallback), or ran on another
// machine than `here` (naming both).
std::vector<GemmPlan> gemm_plans_for(const ResultsFile& file, const std::vector<std::string>& names,
                                     const PlanMachine& here);

}  // namespace mgpu
