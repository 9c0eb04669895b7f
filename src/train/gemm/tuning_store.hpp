// Purpose: what a GEMM tuning holds (the store behind GemmTunings, gemm_tunings.hpp): what runs a shape, a shape's
// options with the choice made alone, and the tunings by device, compute type, operand type and shape.
#pragma once

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/skinny_gemm.cuh"
#include "train/gemm/gemm_tunings.hpp"

namespace mgpu {

// What runs a shape: a cuBLASLt algorithm, or our skinny kernel in one configuration.
struct GemmChoice {
  cublasLtMatmulAlgo_t algo{};
  bool skinny = false;
  kernels::SkinnyGemmConfig skinny_config{};
};

// A shape's options (TunedGemm::shape_options), the choice made alone first, and the one that runs it.
struct ShapeTuning {
  std::vector<GemmChoice> choices;
  std::vector<double> alone_us;
  std::vector<std::string> names;
  int selected = 0;
  int checked = 0;                    // candidates that ran and were compared with the float64 reference
  std::vector<std::string> rejected;  // those beyond its bound, with what was found
  double verification_seconds = 0.0;  // wall time of the float64 reference and of every comparison with it
};

using ChoiceKey = std::tuple<int, int, int, std::tuple<int, int, int, int, int, int, int, int, int, int>>;

// The tunings a GemmTunings holds: (device, compute type, operand type, shape key with its SM count target) -> its
// options and choice.
struct GemmTunings::Store {
  std::mutex mutex;
  std::map<ChoiceKey, ShapeTuning> tunings;
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    tunings.clear();
  }
};

}  // namespace mgpu
