// Purpose: --gemm-plan FILE attached to a job's plan: every configuration gets the GEMM plan its namesake in FILE ran,
// read by rank 0 and received by every rank.
#pragma once

#include <string>
#include <vector>

#include "comm/mpi_context.hpp"
#include "study/backend.hpp"
#include "study/rank_facts.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {

// --gemm-plan FILE: each configuration gets the plan its namesake in FILE ran. Rank 0 reads the file (it may be on
// rank 0's node alone) and every rank receives the plans; a file that cannot give them ends the job on every rank.
void attach_gemm_plans(std::vector<Configuration>& plan, const std::string& path, const BackendChoice& choice,
                       const LibraryVersions& versions, const std::vector<RankHardware>& hardware,
                       const MpiContext& mpi);

}  // namespace mgpu
