// Purpose: the interface every training back-end (CUDA + NCCL, CPU + MPI) implements, and what it is configured with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlp_spec.hpp"
#include "run_record.hpp"

namespace mgpu {

// Adam as MEASUREMENT.md fixes it (Kingma & Ba with bias correction; epsilon added to sqrt(v_hat)).
struct AdamSettings {
  float learning_rate = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-7f;
};

struct TrainingSettings {
  MlpSpec model;
  int global_batch = 32;   // split evenly: rank r of N trains on samples [r*B/N, (r+1)*B/N) of each global batch
  int warmup_steps = 10;
  int measured_steps = 100;
  std::uint64_t seed = 1;
  AdamSettings adam;

  int total_steps() const { return warmup_steps + measured_steps; }
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  // One run: fresh initialisation from (seed, run_index), then warm-up and measured steps. Step s of every run uses
  // global samples [s*B, (s+1)*B). Returns this rank's timings; the caller gathers them across ranks.
  virtual RunRecord run(int run_index) = 0;
  // The current parameters in the flat layout of MlpSpec::layers() (for tests and cross-rank checks).
  virtual std::vector<float> parameters() const = 0;
  // "cuda" or "cpu", as recorded in the results.
  virtual std::string device_kind() const = 0;
};

}  // namespace mgpu
