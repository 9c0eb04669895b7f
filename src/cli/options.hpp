// Purpose: the mgpu_bench command line and study files (Boost.Program_options): parsing and validation into
// BenchOptions, including the lists that make a sweep (models, batches, GPU counts).
#pragma once

#include <string>
#include <vector>

#include "cli/option_values.hpp"
#include "config/configuration.hpp"
#include "config/step_request.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// --trials auto: the fewest and the most trials of a batch.
inline constexpr int kMinAutoTrials = 5;
inline constexpr int kMaxAutoTrials = 10;

// --device: the back-end every rank runs (study/backend.hpp).
enum class DeviceChoice { automatic, cuda, cpu };
inline constexpr NamedValue<DeviceChoice> kDeviceChoiceNames[] = {
    {DeviceChoice::automatic, "auto", "GPUs if every rank has one, else the CPU fallback"},
    {DeviceChoice::cuda, "cuda", "one GPU per rank"},
    {DeviceChoice::cpu, "cpu", "the CPU fallback (OpenBLAS, MPI_Allreduce)"}};
constexpr const auto& named_values(DeviceChoice) { return kDeviceChoiceNames; }

// One model of the sweep with the global batches it runs (`--model M --batch B1,B2` or a `sweep = M:B1,B2` entry).
struct SweepEntry {
  MlpSpec model;
  std::vector<int> global_batches;
};

struct BenchOptions {
  // The grid: every entry's batches, each on every GPU count. One entry with one batch and no --gpus is the
  // single-configuration run of the core (all ranks of the job).
  std::vector<SweepEntry> sweep;
  std::vector<int> gpus;  // ranks per configuration (the first k ranks of the job); empty: gpu_counts' default
  // What every configuration of the job starts from: each recorded setting an option sets (--warmup, --steps, --runs,
  // --seed, --nccl-algo, ...: the rows of config/settings_table.hpp), at its default unless given.
  Configuration settings;
  // Trials per configuration: independent measurements, each with its own set-up and GEMM tuning (docs/statistics.md,
  // "Trials"); the 1-GPU and N-GPU configurations of a batch alternate trial by trial. --trials auto: kMaxAutoTrials
  // planned, of which a batch measures at least kMinAutoTrials and stops once its speedups' trial intervals are within
  // --max-noise or its trials took --max-time (study/trial_stopping.hpp).
  int trials = 1;
  bool adaptive_trials = false;
  // --trials given (command line or study file). Left out, the driver decides (resolve_default_trials): auto on GPUs
  // where a batch pairs 1 GPU with more, 1 on the CPU fallback, and with --resume the trials the file holds.
  bool trials_given = false;
  // When a configuration stops before --runs (docs/measurement.md, "When a configuration stops"): its throughput
  // interval narrow enough for a speedup interval of this relative half-width, in percent (0 = off; off when --runs
  // is given without --max-noise), or this many seconds of runs spent (0 = no limit).
  double max_noise_percent = 1.0;
  double max_time_seconds = 60.0;
  DeviceChoice device = DeviceChoice::automatic;
  std::string output_path;  // empty: default_output_path()
  // --gemm-plan: a results file of an earlier job on this machine; each configuration runs the GEMM plan its
  // namesake there ran instead of tuning (study/gemm_plan_file.hpp). Empty: tune.
  std::string gemm_plan_path;
  StepRequest step;
  bool force = false;
  bool resume = false;          // skip the configurations already complete in the output file, rerun incomplete ones
  double timeout_seconds = -1;  // --timeout: watchdog deadline of every wait; 0 = none; < 0 = derived (watchdog.hpp)
  std::string config_path;      // the study file the options came from ("" without --config)
  bool show_help = false;
  bool show_version = false;
  std::string command_line;  // argv joined, recorded with the results

  // The GPU counts each model and batch runs on in a job of `ranks` ranks: --gpus as given; without it 1 and `ranks`
  // (the 1-GPU baseline a speedup needs, measured beside the N GPUs), or just 1 with one rank.
  std::vector<int> gpu_counts(int ranks) const;
  // Number of configurations one trial of the grid holds in a job of `ranks` ranks (T trials run T times as many).
  std::size_t configuration_count(int ranks) const;
  // When --output is not given: "mgpu_bench_large_b32_n1-2.h5" for one model and batch (its GPU counts joined),
  // "mgpu_bench_sweep_<count>configs.h5" for more; the same name for any number of trials.
  std::string default_output_path(int ranks) const;
};

// Parses and validates everything that does not depend on the MPI job: the command line, and the study file named by
// --config (options given on the command line win over the file's). Throws UsageError with a one-line message naming
// the bad option and value (and the file, for a value from it).
BenchOptions parse_options(int argc, const char* const* argv);
// Checks what depends on the number of ranks: every GPU count fits in the job and divides every global batch.
// Throws UsageError.
void validate_for_ranks(const BenchOptions& options, int ranks);
std::string help_text();

// A study file's `sweep = MODEL:B1,B2,...` entry (MODEL a preset name). Throws UsageError naming the entry.
SweepEntry parse_sweep_entry(const std::string& text, long long max_batch);

}  // namespace mgpu
