// Purpose: parsing and validation of the `allreduce` and `probe` subcommands' options; one line per rejection.
#include "cli/tool_options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <map>
#include <sstream>

#include "cli/option_parsing.hpp"
#include "model/mlp_spec.hpp"
#include "platform/build_info.hpp"
#include "platform/error.hpp"

namespace po = boost::program_options;

namespace mgpu {
namespace {

// 4 GiB per buffer: far above any gradient of interest, and every element count stays inside NCCL's size_t and
// our int64 datasets.
constexpr std::int64_t kMaxSweepBytes = 4LL << 30;
constexpr long long kMaxIterations = 100000;
constexpr long long kMaxTimedRuns = 10000;

// "medium,large": every preset, each subcommand's default --model.
std::string every_preset() {
  std::string list;
  for (const std::string& name : preset_names()) list += (list.empty() ? "" : ",") + name;
  return list;
}

po::options_description allreduce_description() {
  po::options_description description("mgpu_bench allreduce options", 120);
  // clang-format off
  description.add_options()
    ("min-bytes", po::value<std::string>()->default_value("8"), "smallest message per rank (K, M, G: binary multiples)")
    ("max-bytes", po::value<std::string>()->default_value("128M"), "largest message per rank")
    ("factor", po::value<long long>()->default_value(2), "each size is the previous one times this (>= 2)")
    ("model", po::value<std::string>()->default_value(every_preset()),
     "also time the exact fp32 gradient of these presets (comma-separated; 'none' for no extra sizes)")
    ("dtype", po::value<std::string>()->default_value(setting_name(AllreduceDtype::fp32)),
     (command_line_value_list<AllreduceDtype>() + " (bf16: GPU only)").c_str())
    ("iters", po::value<long long>()->default_value(20), "back-to-back all-reduces per timed run")
    ("warmup", po::value<long long>()->default_value(5), "untimed all-reduces before each timed run")
    ("runs", po::value<long long>()->default_value(5), "timed runs per size")
    ("device", po::value<std::string>()->default_value(setting_name(DeviceChoice::automatic)),
     named_option_help<DeviceChoice>("the back-end").c_str())
  ;
  // clang-format on
  // NCCL's algorithm and protocol, as for training (their rows of the settings table).
  for (const char* option : {"nccl-algo", "nccl-proto"})
    with_option_row(option, [&](const auto& row) { describe_option(description, row); });
  // clang-format off
  description.add_options()
    ("output", po::value<std::string>()->default_value("mgpu_bench_allreduce.h5"),
     "results file: created, or an existing one (e.g. a training sweep's) that gets an /allreduce group")
    ("force", "replace an existing /allreduce group (the rest of the file is kept)")
    ("timeout", po::value<std::string>(), "watchdog: stop the sweep with one line when any rank makes no progress for "
     "this many seconds (0 = never; default 60), NCCL's set-up included (docs/reliability.md)")
    ("help,h", "show this help");
  // clang-format on
  return description;
}

po::options_description probe_description() {
  po::options_description description("mgpu_bench probe options", 120);
  // clang-format off
  description.add_options()
    ("model", po::value<std::string>()->default_value(every_preset()), "presets whose GEMM shapes are timed")
    ("batches", po::value<std::string>()->default_value("16,32,64,128,512,1024,2048,4096"),
     "per-GPU batches whose GEMM shapes are timed (comma-separated)")
    ("square", po::value<long long>()->default_value(8192), "m = n = k of the GEMM that measures the peak rate")
    ("iters", po::value<long long>()->default_value(20), "operations per timed graph replay")
    ("runs", po::value<long long>()->default_value(5), "timed replays of each measurement")
    ("output", po::value<std::string>()->default_value("mgpu_bench_probe.h5"),
     "results file: created, or an existing one that gets a /probe group")
    ("force", "replace an existing /probe group (the rest of the file is kept)")
    ("help,h", "show this help");
  // clang-format on
  return description;
}

// Parses argv[1..] (argv[0] is the subcommand), refusing stray words; records the command line.
po::variables_map parse(const po::options_description& description, int argc, const char* const* argv,
                        std::string& command_line) {
  command_line = "mgpu_bench";
  for (int i = 0; i < argc; ++i) command_line += " " + std::string(argv[i]);
  po::variables_map vm;
  // Like argv[0] of a program, the subcommand word is skipped by the parser.
  option_parsing::parse_strict(description, argc, argv, std::string(argv[0]) + ": ", "every option starts with --", vm,
                               true);
  return vm;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) items.push_back(item);
  return items;
}

// Preset names, each checked by preset_model (its UsageError names the bad one).
std::vector<std::string> model_list(const std::string& text, bool allow_none) {
  if (allow_none && text == "none") return {};
  std::vector<std::string> models = split(text);
  if (models.empty() || text.back() == ',')
    throw UsageError("--model '" + text + "': give preset names, e.g. medium,large");
  for (const std::string& model : models) preset_model(model);
  return models;
}

std::string output_path(const po::variables_map& vm) {
  const std::string path = vm["output"].as<std::string>();
  if (path.empty()) throw UsageError("--output '': give a file name");
  return path;
}

}  // namespace

std::size_t allreduce_dtype_bytes(AllreduceDtype dtype) { return dtype == AllreduceDtype::bf16 ? 2 : 4; }

std::int64_t parse_byte_size(const std::string& option, const std::string& text) {
  static const std::map<char, std::int64_t> multiples = {{'K', 1LL << 10}, {'M', 1LL << 20}, {'G', 1LL << 30}};
  std::string digits = text;
  std::int64_t multiple = 1;
  if (!digits.empty()) {
    const auto found = multiples.find(static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back()))));
    if (found != multiples.end()) {
      multiple = found->second;
      digits.pop_back();
    }
  }
  const bool all_digits = !digits.empty() && digits.size() <= 12 &&
                          std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
  const std::int64_t value = all_digits ? std::stoll(digits) * multiple : -1;
  if (value < 1 || value > kMaxSweepBytes)
    throw UsageError("--" + option + " '" + text + "': give a size from 1 to 4G bytes (suffix K, M or G allowed)");
  return value;
}

std::vector<SweepSize> AllreduceOptions::sizes() const {
  const auto element = static_cast<std::int64_t>(allreduce_dtype_bytes(dtype));
  std::vector<SweepSize> all;
  // Rounded down to whole elements; a size below one element is skipped.
  for (std::int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= factor) {
    if (bytes >= element) all.push_back({bytes / element * element, ""});
    if (bytes > max_bytes / factor) break;  // the next size would pass max_bytes (and could overflow)
  }
  for (const std::string& model : gradient_models) {
    const std::int64_t gradient_elements = static_cast<std::int64_t>(preset_model(model).parameter_count());
    all.push_back({gradient_elements * element, model + " gradient"});
  }
  std::stable_sort(all.begin(), all.end(), [](const SweepSize& a, const SweepSize& b) { return a.bytes < b.bytes; });
  std::vector<SweepSize> unique;
  for (const SweepSize& size : all) {
    if (!unique.empty() && unique.back().bytes == size.bytes) {
      if (!size.label.empty()) unique.back().label += (unique.back().label.empty() ? "" : ", ") + size.label;
      continue;
    }
    unique.push_back(size);
  }
  return unique;
}

AllreduceOptions parse_allreduce_options(int argc, const char* const* argv) {
  AllreduceOptions options;
  const po::variables_map vm = parse(allreduce_description(), argc, argv, options.command_line);
  options.show_help = vm.count("help") > 0;
  if (options.show_help) return options;
  options.min_bytes = parse_byte_size("min-bytes", vm["min-bytes"].as<std::string>());
  options.max_bytes = parse_byte_size("max-bytes", vm["max-bytes"].as<std::string>());
  if (options.max_bytes < options.min_bytes)
    throw UsageError("--max-bytes " + std::to_string(options.max_bytes) + ": smaller than --min-bytes " +
                     std::to_string(options.min_bytes));
  options.factor = checked_int(vm, "factor", 2, 1024);
  options.gradient_models = model_list(vm["model"].as<std::string>(), true);
  options.dtype = parse_named<AllreduceDtype>("dtype", vm["dtype"].as<std::string>());
  options.iterations = checked_int(vm, "iters", 1, kMaxIterations);
  options.warmup_iterations = checked_int(vm, "warmup", 0, kMaxIterations);
  options.runs = checked_int(vm, "runs", 1, kMaxTimedRuns);
  options.device = parse_named<DeviceChoice>("device", vm["device"].as<std::string>());
  // NCCL's algorithm and protocol through their rows of the settings table, as training reads them.
  Configuration nccl;
  for (const char* option : {"nccl-algo", "nccl-proto"})
    with_option_row(option, [&](const auto& row) {
      if constexpr (!kIsStepOption<decltype(row)>) parse_recorded_option(row, vm, nccl);
    });
  options.nccl_algo = nccl.nccl_algo;
  options.nccl_proto = nccl.nccl_proto;
  options.output_path = output_path(vm);
  options.force = vm.count("force") > 0;
  if (vm.count("timeout")) options.timeout_seconds = parse_timeout_seconds(vm["timeout"].as<std::string>());
  for (const SweepSize& size : options.sizes())
    if (size.bytes > kMaxSweepBytes)
      throw UsageError("--model: a gradient of " + std::to_string(size.bytes) + " bytes is above the 4G limit");
  return options;
}

ProbeOptions parse_probe_options(int argc, const char* const* argv) {
  ProbeOptions options;
  const po::variables_map vm = parse(probe_description(), argc, argv, options.command_line);
  options.show_help = vm.count("help") > 0;
  if (options.show_help) return options;
  options.models = model_list(vm["model"].as<std::string>(), false);
  const std::string batches = vm["batches"].as<std::string>();
  options.batches.clear();
  for (const std::string& item : split(batches)) {
    const bool digits = !item.empty() && item.size() <= 7 &&
                        std::all_of(item.begin(), item.end(), [](unsigned char c) { return std::isdigit(c); });
    const int batch = digits ? std::stoi(item) : 0;
    if (batch < 1 || batch > 1048576)
      throw UsageError("--batches '" + batches + "': '" + item + "' is not a batch from 1 to 1048576");
    options.batches.push_back(batch);
  }
  if (options.batches.empty() || batches.back() == ',') throw UsageError("--batches '" + batches + "': empty list");
  options.square = checked_int(vm, "square", 64, 32768);
  options.iterations = checked_int(vm, "iters", 1, 10000);
  options.runs = checked_int(vm, "runs", 1, kMaxTimedRuns);
  options.output_path = output_path(vm);
  options.force = vm.count("force") > 0;
  return options;
}

std::string allreduce_help_text() {
  std::ostringstream text;
  text << "mgpu_bench " << project_version() << " allreduce: the standalone all-reduce sweep (nccl-tests style)\n"
       << "usage: mpirun -np N mgpu_bench allreduce [options]   (one rank per GPU; MPI_Allreduce without GPUs)\n\n"
       << allreduce_description();
  return text.str();
}

std::string probe_help_text() {
  std::ostringstream text;
  text << "mgpu_bench " << project_version() << " probe: copy bandwidth, GEMM rates and launch costs of one GPU\n"
       << "usage: mgpu_bench probe [options]   (one process, one GPU)\n\n"
       << probe_description();
  return text.str();
}

}  // namespace mgpu
