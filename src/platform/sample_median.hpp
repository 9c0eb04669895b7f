// Purpose: the median of a sample, written once for the console summaries of mgpu_bench allreduce and probe and for
// mgpu_analyze's statistics (src/stats/statistics.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace mgpu {

// The middle value of the sorted sample, or the mean of the two middle ones; 0 for an empty sample.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace mgpu
