// Purpose: tests of --gemm-plan's lookup in an earlier job's results: each configuration (trials included) takes the
// plan its namesake ran, the one most of its trials ran, and a file that cannot give one for this machine is refused
// with one line naming the file, the configuration and, for another machine, both machines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "platform/error.hpp"
#include "study/gemm_plan_file.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {
namespace {

const PlanMachine kHere{"NVIDIA H100 80GB HBM3", "13.0", "13.1.0"};

ConfigurationResults configuration(const std::string& name, const std::string& option,
                                   const PlanMachine& machine = kHere) {
  ConfigurationResults c;
  c.metadata.name = name;
  c.metadata.device = "cuda";
  c.metadata.configuration.training.gemm_tuning = GemmTuning::step;
  c.metadata.gemm_choices = "gemm NN m=8 n=8 k=8: " + option + " (1.00 us alone; 3 candidates verified)\n";
  c.metadata.gpu_names = {machine.gpu_name, machine.gpu_name};
  c.metadata.cuda_driver_version = machine.cuda_driver_version;
  c.metadata.cublas_version = machine.cublas_version;
  return c;
}

ResultsFile file_of(std::vector<ConfigurationResults> configurations) {
  ResultsFile file;
  file.path = "plan.h5";
  file.configurations = std::move(configurations);
  return file;
}

std::string option_of(const GemmPlan& plan) { return plan.option_of_shape.at("NN m=8 n=8 k=8"); }

TEST(GemmPlanFile, TrialsAreOneConfigurationAndTheirCommonestPlanWins) {
  EXPECT_EQ(without_trial("large_b32_n2_cuda_t12"), "large_b32_n2_cuda");
  EXPECT_EQ(without_trial("large_b32_n2_cuda"), "large_b32_n2_cuda");
  EXPECT_EQ(without_trial("50-256-3_b8_n1_cuda_t1"), "50-256-3_b8_n1_cuda");
  const ResultsFile file =
      file_of({configuration("large_b32_n1_cuda_t1", "a"), configuration("large_b32_n2_cuda_t1", "x"),
               configuration("large_b32_n1_cuda_t2", "b"), configuration("large_b32_n1_cuda_t3", "b"),
               configuration("medium_b32_n1_cuda", "c"), configuration("medium_b64_n1_cuda", "d")});
  const std::vector<GemmPlan> plans = gemm_plans_for(
      file, {"large_b32_n1_cuda_t1", "large_b32_n2_cuda_t4", "large_b32_n1_cuda", "medium_b32_n1_cuda_t2"}, kHere);
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(option_of(plans[0]), "b");  // two trials of three ran b
  EXPECT_EQ(option_of(plans[1]), "x");
  EXPECT_EQ(option_of(plans[2]), "b");
  EXPECT_EQ(option_of(plans[3]), "c");
  EXPECT_NE(plans[0].source.find("plan.h5, configuration large_b32_n1_cuda_t"), std::string::npos) << plans[0].source;
  // Equal votes: the earliest trial's.
  EXPECT_EQ(
      option_of(gemm_plans_for(file_of({configuration("m_b8_n1_cuda_t1", "p"), configuration("m_b8_n1_cuda_t2", "q")}),
                               {"m_b8_n1_cuda"}, kHere)
                    .front()),
      "p");
}

TEST(GemmPlanFile, AFileThatCannotGiveThePlanIsRefusedInOneLine) {
  ConfigurationResults cpu = configuration("large_b32_n1_cpu", "a");
  cpu.metadata.gemm_choices.clear();
  cpu.metadata.device = "cpu";
  const PlanMachine h200{"NVIDIA H200", "13.0", "13.1.0"};
  const PlanMachine other_driver{"NVIDIA H100 80GB HBM3", "12.9", "13.1.0"};
  const PlanMachine other_cublas{"NVIDIA H100 80GB HBM3", "13.0", "13.0.2"};
  const std::vector<std::pair<std::vector<ConfigurationResults>, std::string>> cases = {
      {{configuration("large_b64_n1_cuda", "a")}, "--gemm-plan plan.h5: no configuration large_b32_n1_cuda"},
      {{cpu}, "configuration large_b32_n1_cpu: no GEMM plan recorded (cpu, gemm_tuning n/a)"},
      {{configuration("large_b32_n1_cuda", "a", h200)},
       "tuned on NVIDIA H200, driver 13.0, cuBLAS 13.1.0, this job runs on NVIDIA H100 80GB HBM3, driver 13.0, cuBLAS "
       "13.1.0"},
      {{configuration("large_b32_n1_cuda", "a", other_driver)}, "driver 12.9"},
      {{configuration("large_b32_n1_cuda", "a", other_cublas)}, "cuBLAS 13.0.2"}};
  for (const auto& [configurations, expected] : cases) {
    try {
      const std::string wanted =
          configurations.front().metadata.device == "cpu" ? "large_b32_n1_cpu" : "large_b32_n1_cuda";
      gemm_plans_for(file_of(configurations), {wanted}, kHere);
      ADD_FAILURE() << "accepted: " << expected;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  // Ranks on GPUs of two models: no one machine the plan was tuned on.
  ConfigurationResults mixed = configuration("large_b32_n2_cuda", "a");
  mixed.metadata.gpu_names = {kHere.gpu_name, h200.gpu_name};
  EXPECT_THROW(gemm_plans_for(file_of({mixed}), {"large_b32_n2_cuda"}, kHere), UsageError);
}

}  // namespace
}  // namespace mgpu
