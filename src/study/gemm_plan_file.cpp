// Purpose: the GEMM plans of an earlier job's results file (gemm_plan_file.hpp).
#include "study/gemm_plan_file.hpp"

#include "platform/error.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {
namespace {

std::string describe(const PlanMachine& machine) {
  return machine.gpu_name + ", driver " + machine.cuda_driver_version + ", cuBLAS " + machine.cublas_version;
}

// The machine a configuration of the file ran on; "" for a GPU name where its ranks' GPUs differ.
PlanMachine machine_of(const ConfigurationMetadata& metadata) {
  PlanMachine machine{metadata.gpu_names.empty() ? "" : metadata.gpu_names.front(), metadata.cuda_driver_version,
                      metadata.cublas_version};
  for (const std::string& name : metadata.gpu_names) {
    if (name != machine.gpu_name) machine.gpu_name = "";
  }
  return machine;
}

// The plan of the file's trials of configuration `wanted`: the one most trials ran, the earliest among equals.
GemmPlan most_common_plan(const ResultsFile& file, const std::string& wanted, const PlanMachine& here) {
  std::vector<GemmPlan> plans;
  std::vector<int> votes;
  for (const ConfigurationResults& configuration : file.configurations) {
    const ConfigurationMetadata& metadata = configuration.metadata;
    if (without_trial(metadata.name) != wanted) continue;
    const std::string source = file.path + ", configuration " + metadata.name;
    if (metadata.gemm_choices.empty())
      throw UsageError("--gemm-plan " + source + ": no GEMM plan recorded (" + metadata.device + ", gemm_tuning " +
                       results_schema::stored_setting(metadata.training().gemm_tuning, metadata.device == "cuda") +
                       ")");
    const PlanMachine there = machine_of(metadata);
    if (there.gpu_name != here.gpu_name || there.cuda_driver_version != here.cuda_driver_version ||
        there.cublas_version != here.cublas_version)
      throw UsageError("--gemm-plan " + source + ": tuned on " + describe(there) + ", this job runs on " +
                       describe(here) + "; a plan holds only for the machine it was tuned on");
    GemmPlan plan = parse_gemm_choices(metadata.gemm_choices, source);
    std::size_t i = 0;
    while (i < plans.size() && !(plans[i] == plan)) ++i;
    if (i == plans.size()) {
      plans.push_back(std::move(plan));
      votes.push_back(0);
    }
    ++votes[i];
  }
  if (plans.empty()) throw UsageError("--gemm-plan " + file.path + ": no configuration " + wanted);
  std::size_t best = 0;
  for (std::size_t i = 1; i < plans.size(); ++i) {
    if (votes[i] > votes[best]) best = i;
  }
  return plans[best];
}

}  // namespace

std::vector<GemmPlan> gemm_plans_for(const ResultsFile& file, const std::vector<std::string>& names,
                                     const PlanMachine& here) {
  std::vector<GemmPlan> plans;
  for (const std::string& name : names) plans.push_back(most_common_plan(file, without_trial(name), here));
  return plans;
}

}  // namespace mgpu
