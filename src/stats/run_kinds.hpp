// Purpose: which runs of a configuration give what (docs/statistics.md, "Two kinds of run"): where it has runs without
// phase marks and runs with them (--timing interleaved), throughput and everything computed from it come from the
// unmarked runs, each mark slowing the step, and the phase breakdown from the marked ones; otherwise every run gives
// both. The one rule the analyzer's statistics, the console's summary and the stopping rules read.
#pragma once

#include <vector>

namespace mgpu::stats {

struct RunKinds {
  std::vector<int> throughput;  // the throughput runs, in run order
  std::vector<int> phases;      // the phase runs where they are not the throughput runs; empty otherwise
  bool split() const { return !phases.empty(); }
};

// The kinds of the runs whose phase marks are `phases_marked` (run r marked every phase of its steps).
RunKinds run_kinds(const std::vector<bool>& phases_marked);

}  // namespace mgpu::stats
