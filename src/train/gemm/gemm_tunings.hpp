// Purpose: the GEMM tunings of a job, which the job owns: per device, compute type, operand type and shape, the
// options timed and the one chosen, so that every TunedGemm given the same tunings runs one choice per shape
// (bit-identical products). The job clears them between configurations: each configuration and trial tunes its own.
#pragma once

#include <memory>

namespace mgpu {

class GemmTunings {
 public:
  GemmTunings();
  ~GemmTunings();
  GemmTunings(const GemmTunings&) = delete;
  GemmTunings& operator=(const GemmTunings&) = delete;

  // Forgets every tuning: the next TunedGemm tunes every shape afresh. No TunedGemm using these may be alive.
  void clear();

  struct Store;  // the tunings themselves (tuning_store.hpp; nothing without CUDA)
  Store& store() { return *store_; }

 private:
  std::unique_ptr<Store> store_;
};

}  // namespace mgpu
