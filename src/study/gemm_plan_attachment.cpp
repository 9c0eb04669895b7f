// Purpose: --gemm-plan FILE attached to a job's plan (gemm_plan_attachment.hpp).
#include "study/gemm_plan_attachment.hpp"

#include <exception>

#include "config/resolver.hpp"
#include "platform/error.hpp"
#include "results/results_reader.hpp"
#include "study/gemm_plan_file.hpp"
#include "train/gemm/gemm_plan.hpp"

namespace mgpu {

void attach_gemm_plans(std::vector<Configuration>& plan, const std::string& path, const BackendChoice& choice,
                       const LibraryVersions& versions, const std::vector<RankHardware>& hardware,
                       const MpiContext& mpi) {
  std::vector<std::string> texts(plan.size());
  std::string error;
  if (mpi.rank == 0) {
    try {
      if (choice.backend != Backend::cuda) throw UsageError("--gemm-plan: the CPU fallback tunes no GEMMs");
      std::vector<std::string> names;
      for (const Configuration& configuration : plan) names.push_back(configuration.name("cuda"));
      const PlanMachine here{hardware.front().gpu_name, versions.cuda_driver, versions.cublas};
      const std::vector<GemmPlan> plans = gemm_plans_for(read_results_file(path), names, here);
      for (std::size_t i = 0; i < plan.size(); ++i) texts[i] = plans[i].source + "\n" + gemm_choices_text(plans[i]);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree_or_throw(mpi, error);
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const std::string text = allgather_strings(mpi, texts[i]).front();
    const std::size_t end_of_source = text.find('\n');
    adopt_gemm_plan(plan[i].training, parse_gemm_choices(text.substr(end_of_source + 1), text.substr(0, end_of_source)),
                    true);
  }
}

}  // namespace mgpu
