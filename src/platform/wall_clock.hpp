// Purpose: wall-clock seconds since a steady_clock point, the one form every set-up, run and check timer reads.
#pragma once

#include <chrono>

namespace mgpu {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace mgpu
