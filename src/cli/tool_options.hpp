// Purpose: the command lines of the measurement subcommands, `mgpu_bench allreduce` and `mgpu_bench probe`
// (Boost.Program_options), parsed and validated into plain structs; every rejection is one line naming the value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "model/mlp_spec.hpp"

namespace mgpu {

// The all-reduce element type: the training step's --grad-dtype type (named by setting_name).
using AllreduceDtype = GradDtype;
std::size_t allreduce_dtype_bytes(AllreduceDtype dtype);

// One message size of the sweep; label is "" or the gradient it stands for ("large gradient").
struct SweepSize {
  std::int64_t bytes = 0;
  std::string label;
};

struct AllreduceOptions {
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = 128LL << 20;
  int factor = 2;
  std::vector<std::string> gradient_models = preset_names();  // their exact fp32 gradient sizes are added
  AllreduceDtype dtype = AllreduceDtype::fp32;
  int iterations = 20;
  int warmup_iterations = 5;
  int runs = 5;
  DeviceChoice device = DeviceChoice::automatic;
  std::string nccl_algo = kNcclDefault;  // NCCL's spelling; kNcclDefault: NCCL chooses
  std::string nccl_proto = kNcclDefault;
  std::string output_path = "mgpu_bench_allreduce.h5";
  bool force = false;           // replace an existing /allreduce group (never the rest of the file)
  double timeout_seconds = -1;  // --timeout: the watchdog's deadline of every wait; 0 = none; < 0 = its default
  bool show_help = false;
  std::string command_line;

  // The sweep min, min*factor, ... <= max, plus each gradient size; every size a whole number of elements, sorted,
  // no duplicates (a gradient size that the sweep also hits keeps its label).
  std::vector<SweepSize> sizes() const;
};

struct ProbeOptions {
  std::vector<std::string> models = preset_names();
  std::vector<int> batches = {16, 32, 64, 128, 512, 1024, 2048, 4096};  // per-GPU batches whose GEMMs are timed
  int square = 8192;                                                    // the m = n = k of the peak-rate GEMM
  int iterations = 20;                                                  // operations per timed graph replay
  int runs = 5;
  std::string output_path = "mgpu_bench_probe.h5";
  bool force = false;  // replace an existing /probe group
  bool show_help = false;
  std::string command_line;
};

// argv[0] is the subcommand's name ("allreduce" / "probe"); command_line records "mgpu_bench <argv...>".
AllreduceOptions parse_allreduce_options(int argc, const char* const* argv);
ProbeOptions parse_probe_options(int argc, const char* const* argv);
std::string allreduce_help_text();
std::string probe_help_text();

// "8", "64K", "1M", "1G" (binary multiples, as nccl-tests reads them) -> bytes. Throws UsageError naming the option.
std::int64_t parse_byte_size(const std::string& option, const std::string& text);

}  // namespace mgpu
