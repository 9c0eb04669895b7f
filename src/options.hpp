// Purpose: the mgpu_bench command line (Boost.Program_options): parsing and validation into BenchOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlp_spec.hpp"
#include "trainer.hpp"

namespace mgpu {

enum class DeviceChoice { automatic, cuda, cpu };
const char* device_choice_name(DeviceChoice choice);

// --- Step execution options (--graph, --overlap, --bucket-mb, --precision, --timing): how the CUDA step runs. ---
// auto: graph on where the back-end can (CUDA), overlap off (measured no faster, docs/measurement.md); both off on
// the CPU fallback.
enum class Toggle { automatic, on, off };
struct StepOptions {
  Toggle graph = Toggle::automatic;
  Toggle overlap = Toggle::automatic;
  double bucket_mb = 8.0;
  Precision precision = Precision::fp32;
  TimingMode timing = TimingMode::events;
};
// Resolves `step` for the chosen back-end into `settings`; throws UsageError (one line) for what the CPU fallback
// cannot honour (--graph on, --overlap on, --precision tf32/bf16, --timing none).
void apply_step_options(const StepOptions& step, bool cuda_backend, TrainingSettings& settings);

struct BenchOptions {
  MlpSpec model;
  int global_batch = 32;
  int warmup_steps = 10;
  int measured_steps = 100;
  int runs = 50;
  std::uint64_t seed = 1;
  DeviceChoice device = DeviceChoice::automatic;
  std::string nccl_algo;   // empty: NCCL chooses
  std::string nccl_proto;  // empty: NCCL chooses
  std::string output_path; // empty: default_output_path()
  StepOptions step;
  bool force = false;
  bool show_help = false;
  bool show_version = false;
  std::string command_line;  // argv joined, recorded with the results

  // "mgpu_bench_large_b32_n2.h5" when --output is not given.
  std::string default_output_path(int ranks) const;
};

// Parses and validates everything that does not depend on the MPI job. Throws UsageError with a one-line message
// naming the bad option and value.
BenchOptions parse_options(int argc, const char* const* argv);
// Checks what depends on the number of ranks (the global batch must split evenly). Throws UsageError.
void validate_for_ranks(const BenchOptions& options, int ranks);
std::string help_text();

// NCCL's spelling of a validated --nccl-algo / --nccl-proto value list (e.g. "tree" -> "Tree", "^ring" kept).
std::string nccl_algo_env_value(const std::string& option_value);
std::string nccl_proto_env_value(const std::string& option_value);

}  // namespace mgpu
