// Purpose: command-line parsing and validation; every rejection is one line naming the option and the bad value.
#include "options.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

#include "build_info.hpp"
#include "error.hpp"

namespace po = boost::program_options;

namespace mgpu {
namespace {

po::options_description describe_options() {
  po::options_description description("mgpu_bench options", 120);
  // clang-format off
  description.add_options()
    ("model", po::value<std::string>(), "preset MLP: medium (258,432 parameters) or large (6,885,376); default large")
    ("layers", po::value<std::string>(), "any other MLP by its widths, e.g. 50,256,128,64,3 (exclusive with --model)")
    ("dropout", po::value<double>(), "drop probability after each hidden layer (default: the preset's; 0 for --layers)")
    ("batch", po::value<long long>()->default_value(32), "global batch, split evenly across ranks")
    ("warmup", po::value<long long>()->default_value(10), "warm-up steps per run (recorded and flagged)")
    ("steps", po::value<long long>()->default_value(100), "measured steps per run")
    ("runs", po::value<long long>()->default_value(50), "runs per configuration (fresh initialisation each)")
    ("seed", po::value<std::string>()->default_value("1"), "seed of data, initialisation and dropout")
    ("device", po::value<std::string>()->default_value("auto"), "auto | cuda | cpu (auto: GPUs if every rank has one)")
    ("nccl-algo", po::value<std::string>(), "NCCL_ALGO for the gradient all-reduce, e.g. tree or ring (default: NCCL's)")
    ("nccl-proto", po::value<std::string>(), "NCCL_PROTO, e.g. simple, ll, ll128 (default: NCCL's)")
    ("output", po::value<std::string>(), "results file (HDF5); default mgpu_bench_<model>_b<batch>_n<ranks>.h5")
    ("force", "overwrite an existing output file")
    ("help", "show this help")
    ("version", "show the version and git revision");
  // clang-format on
  return description;
}

// Upper bounds keep every count, product and MPI message size far inside 32 bits: 100,000 steps of 7 values per
// rank are 5.6 MB a run, and the study itself uses 110 steps and 50 runs.
constexpr long long kMaxSteps = 100000;
constexpr long long kMaxRuns = 100000;
constexpr long long kMaxBatch = 1LL << 24;

int checked_int(const po::variables_map& vm, const char* name, long long minimum, long long maximum) {
  const long long value = vm[name].as<long long>();
  if (value < minimum || value > maximum) {
    throw UsageError("--" + std::string(name) + " " + std::to_string(value) + ": must be from " +
                     std::to_string(minimum) + " to " + std::to_string(maximum));
  }
  return static_cast<int>(value);
}

std::uint64_t parse_seed(const std::string& text) {
  const bool all_digits = !text.empty() && text.size() <= 20 &&
                          std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  if (all_digits) {
    try {
      return std::stoull(text);
    } catch (const std::exception&) {
    }
  }
  throw UsageError("--seed '" + text + "': must be a non-negative 64-bit integer");
}

DeviceChoice parse_device(const std::string& text) {
  if (text == "auto") return DeviceChoice::automatic;
  if (text == "cuda") return DeviceChoice::cuda;
  if (text == "cpu") return DeviceChoice::cpu;
  throw UsageError("--device '" + text + "': choose auto, cuda or cpu");
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Maps a comma-separated list (optionally starting with '^', NCCL's "all but") onto NCCL's spelling, rejecting
// names NCCL does not know. Validated here so a typo fails at once instead of being ignored by NCCL.
std::string nccl_list_value(const std::string& option, const std::string& value,
                            const std::vector<std::string>& known_names) {
  std::string body = value;
  std::string prefix;
  if (!body.empty() && body[0] == '^') {
    prefix = "^";
    body = body.substr(1);
  }
  std::string result;
  std::stringstream stream(body);
  std::string item;
  bool any = false;
  while (std::getline(stream, item, ',')) {
    const auto match = std::find_if(known_names.begin(), known_names.end(),
                                    [&](const std::string& name) { return lower(name) == lower(item); });
    if (match == known_names.end()) {
      std::string choices;
      for (const std::string& name : known_names) choices += (choices.empty() ? "" : ", ") + lower(name);
      throw UsageError("--" + option + " '" + value + "': unknown '" + item + "' (choose from " + choices + ")");
    }
    result += (any ? "," : "") + *match;
    any = true;
  }
  if (!any || body.back() == ',') throw UsageError("--" + option + " '" + value + "': empty list");
  return prefix + result;
}

}  // namespace

const char* device_choice_name(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::cuda: return "cuda";
    case DeviceChoice::cpu: return "cpu";
    default: return "auto";
  }
}

DeviceChoice parse_device_choice(const std::string& text) { return parse_device(text); }

std::string nccl_algo_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-algo", option_value,
                         {"Ring", "Tree", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"});
}

std::string nccl_proto_env_value(const std::string& option_value) {
  return nccl_list_value("nccl-proto", option_value, {"LL", "LL128", "Simple"});
}

std::string BenchOptions::default_output_path(int ranks) const {
  return "mgpu_bench_" + (model.name == "custom" ? model.widths_string() : model.name) + "_b" +
         std::to_string(global_batch) + "_n" + std::to_string(ranks) + ".h5";
}

BenchOptions parse_options(int argc, const char* const* argv) {
  BenchOptions options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);

  po::variables_map vm;
  try {
    // A stray word ("--steps 100 200") is collected and refused below, never silently dropped.
    po::options_description all = describe_options();
    all.add_options()("stray", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray", -1);
    po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("stray")) {
    throw UsageError("unexpected argument '" + vm["stray"].as<std::vector<std::string>>().front() +
                     "' (every option starts with --; see --help)");
  }
  options.show_help = vm.count("help") > 0;
  options.show_version = vm.count("version") > 0;
  if (options.show_help || options.show_version) return options;

  if (vm.count("model") && vm.count("layers")) throw UsageError("--model and --layers exclude each other: give one");
  if (vm.count("layers")) {
    const double dropout = vm.count("dropout") ? vm["dropout"].as<double>() : 0.0;
    options.model = custom_model(parse_layer_widths(vm["layers"].as<std::string>()), dropout);
  } else {
    const std::string preset = vm.count("model") ? vm["model"].as<std::string>() : "large";
    options.model = preset_model(preset);
    if (vm.count("dropout")) {
      // The preset's widths with another dropout (e.g. 0 for exact cross-rank comparisons); still named the preset.
      options.model = custom_model(options.model.widths, vm["dropout"].as<double>());
      options.model.name = preset;
    }
  }
  options.global_batch = checked_int(vm, "batch", 1, kMaxBatch);
  options.warmup_steps = checked_int(vm, "warmup", 0, kMaxSteps);
  options.measured_steps = checked_int(vm, "steps", 1, kMaxSteps);
  options.runs = checked_int(vm, "runs", 1, kMaxRuns);
  options.seed = parse_seed(vm["seed"].as<std::string>());
  options.device = parse_device(vm["device"].as<std::string>());
  if (vm.count("nccl-algo")) options.nccl_algo = nccl_algo_env_value(vm["nccl-algo"].as<std::string>());
  if (vm.count("nccl-proto")) options.nccl_proto = nccl_proto_env_value(vm["nccl-proto"].as<std::string>());
  if (vm.count("output")) {
    options.output_path = vm["output"].as<std::string>();
    if (options.output_path.empty()) throw UsageError("--output '': give a file name");
  }
  options.force = vm.count("force") > 0;
  return options;
}

void validate_for_ranks(const BenchOptions& options, int ranks) {
  if (options.global_batch % ranks != 0) {
    throw UsageError("--batch " + std::to_string(options.global_batch) + ": the global batch must be divisible by the " +
                     std::to_string(ranks) + " ranks");
  }
}

std::string help_text() {
  std::ostringstream text;
  text << "mgpu_bench " << project_version() << ": data-parallel MLP training benchmark (MPI + NCCL + cuBLAS)\n"
       << "usage: mpirun -np N mgpu_bench [options]   (one rank per GPU)\n"
       << "       mgpu_bench allreduce --help | mgpu_bench probe --help   (the measurement subcommands)\n\n"
       << describe_options();
  return text.str();
}

}  // namespace mgpu
