// Purpose: the judgements made of a run's or a configuration's recorded facts: a throttled run (its clocks), and what
// a configuration's replica check and math check say. The results file records the facts and, for the clocks, the
// flag this rule gives (results_schema.hpp's throttled dataset); every reader judges by these.
#pragma once

#include <string_view>

namespace mgpu::stats {

// docs/measurement.md: a run whose mean SM clock is below this fraction of the rank's maximum SM clock is throttled.
inline constexpr double kThrottleFraction = 0.75;
// 0 stands for "unknown" in both clocks, and an unknown clock never flags a run.
inline bool is_throttled(double mean_sm_clock_mhz, double max_sm_clock_mhz) {
  return mean_sm_clock_mhz > 0 && max_sm_clock_mhz > 0 && mean_sm_clock_mhz < kThrottleFraction * max_sm_clock_mhz;
}

// What a configuration's replica_check says (comm/replica_check.cpp writes the texts): the ranks' parameters were
// bit-identical after its runs (or there was one rank), nothing checked them (a file before version 9, the PyTorch
// peer), or they differed. Readers compute no speedup or verdict from a configuration whose replicas differed.
enum class ReplicaVerdict { identical, not_checked, differ };
inline ReplicaVerdict replica_verdict(std::string_view replica_check) {
  if (replica_check.empty()) return ReplicaVerdict::not_checked;
  if (replica_check.rfind("identical on ", 0) == 0 || replica_check == "1 rank: nothing to compare")
    return ReplicaVerdict::identical;
  return ReplicaVerdict::differ;
}

// What a configuration's math_check says: passed, not checked (a file before version 10, the PyTorch peer), or
// failed. Readers compute no speedup or verdict from a configuration whose check failed.
enum class MathCheckVerdict { passed, not_checked, failed };
inline MathCheckVerdict math_check_verdict(std::string_view math_check) {
  if (math_check.empty()) return MathCheckVerdict::not_checked;
  return math_check.rfind("passed", 0) == 0 ? MathCheckVerdict::passed : MathCheckVerdict::failed;
}

}  // namespace mgpu::stats
