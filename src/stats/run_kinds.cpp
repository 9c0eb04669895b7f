// Purpose: run_kinds (run_kinds.hpp).
#include "stats/run_kinds.hpp"

namespace mgpu::stats {

RunKinds run_kinds(const std::vector<bool>& phases_marked) {
  RunKinds kinds;
  std::vector<int> unmarked, marked;
  for (std::size_t run = 0; run < phases_marked.size(); ++run)
    (phases_marked[run] ? marked : unmarked).push_back(static_cast<int>(run));
  if (unmarked.empty() || marked.empty()) {
    kinds.throughput = unmarked.empty() ? marked : unmarked;
  } else {
    kinds.throughput = unmarked;
    kinds.phases = marked;
  }
  return kinds;
}

}  // namespace mgpu::stats
