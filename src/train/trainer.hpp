// Purpose: the interface every training back-end (CUDA + NCCL, CPU + MPI) implements, and what it is configured with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/step_settings.hpp"
#include "model/mlp_spec.hpp"
#include "results/run_record.hpp"

namespace mgpu {

class Trainer {
 public:
  virtual ~Trainer() = default;
  // One run: fresh initialisation from (seed, run_index), then warm-up and measured steps. Step s of every run uses
  // global samples [s*B, (s+1)*B). Returns this rank's timings; the caller gathers them across ranks.
  virtual RunRecord run(int run_index) = 0;
  // The current parameters in the flat layout of MlpSpec::layers() (for tests and cross-rank checks).
  virtual std::vector<float> parameters() const = 0;
  // The math check (math_check.hpp). The parameters after `steps` (1 .. total_steps()) steps of the configured step
  // itself (its graph, GEMM choices, buckets, overlap order, fused optimizer and precision) from run 0's
  // initialisation, untimed; collective like run().
  virtual std::vector<float> parameters_after_steps(int steps) = 0;
  // The same steps by the plain reference of the same global batch on this rank alone: float64 on the CPU fallback;
  // on CUDA one GPU's eager step in the configuration's precision (cuBLASLt's default algorithms, no graph, no
  // fusion, no reduction). Its initial parameters and those after the steps.
  struct ReferenceRun {
    std::vector<double> initial;
    std::vector<double> trained;
  };
  virtual ReferenceRun reference_run(int steps) const = 0;
  // GEMM candidates compared with the float64 product during set-up, and those rejected (0 where nothing is tuned).
  virtual int gemm_candidates_checked() const { return 0; }
  virtual int gemm_candidates_rejected() const { return 0; }
  // The wall time set-up spent verifying them (the float64 references and the comparisons; 0 where nothing is tuned).
  virtual double gemm_verification_seconds() const { return 0.0; }
  // "cuda" or "cpu", as recorded in the results.
  virtual std::string device_kind() const = 0;
  // What runs each GEMM shape of the step, one line per shape (empty where nothing is chosen: the CPU fallback).
  virtual std::string gemm_choices() const { return {}; }
  // How the step's kernels run, as set-up chose them (--step-kernel): "chain" or "persistent"; "" where nothing is
  // chosen (the CPU fallback).
  virtual std::string step_kernel_chosen() const { return {}; }
  // How rank 0's unique id reached this configuration's ranks (comm/unique_id.hpp): NCCL's on GPUs, one of the CPU
  // fallback's own on its path; "" with one rank.
  virtual std::string unique_id_check() const { return {}; }
};

}  // namespace mgpu
