// Purpose: a ratio's interval as the tests of the interval rule and of compare's verdict state it: its ends, the ratio
// midway.
#pragma once

#include "stats/speedup_interval.hpp"

namespace mgpu::stats {

inline RatioInterval interval(double low, double high) {
  RatioInterval r;
  r.ratio = (low + high) / 2;
  r.has_interval = true;
  r.low = low;
  r.high = high;
  return r;
}

}  // namespace mgpu::stats
