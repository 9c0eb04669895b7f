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
    ("graph", po::value<std::string>()->default_value("auto"),
     "auto | on | off: replay each step as one CUDA graph, NCCL included (auto: on for CUDA)")
    ("overlap", po::value<std::string>()->default_value("auto"),
     "auto | on | off: reduce gradients in buckets during backward, Adam per reduced bucket (auto: off, see docs)")
    ("bucket-mb", po::value<double>()->default_value(8.0), "all-reduce bucket cap in MB with --overlap on (first: 1 MB)")
    ("precision", po::value<std::string>()->default_value("fp32"), "fp32 | tf32 GEMMs (bf16: not yet available)")
    ("timing", po::value<std::string>()->default_value("events"),
     "events: every phase of every step | none: one event pair per run part (to measure the instrumentation)")
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

// ---- Step execution options (one block, so the driver's own options stay apart from the step's).

Toggle parse_toggle(const char* option, const std::string& text) {
  if (text == "auto") return Toggle::automatic;
  if (text == "on") return Toggle::on;
  if (text == "off") return Toggle::off;
  throw UsageError("--" + std::string(option) + " '" + text + "': choose auto, on or off");
}

StepOptions parse_step_options(const po::variables_map& vm) {
  StepOptions step;
  step.graph = parse_toggle("graph", vm["graph"].as<std::string>());
  step.overlap = parse_toggle("overlap", vm["overlap"].as<std::string>());
  step.bucket_mb = vm["bucket-mb"].as<double>();
  // A bucket smaller than one float or larger than any GPU's memory is a typo, not a configuration.
  if (!(step.bucket_mb >= 1e-6 && step.bucket_mb <= 1e6)) {
    throw UsageError("--bucket-mb " + std::to_string(step.bucket_mb) + ": must be from 1e-06 to 1e+06 MB");
  }
  const std::string precision = vm["precision"].as<std::string>();
  if (precision == "fp32") {
    step.precision = Precision::fp32;
  } else if (precision == "tf32") {
    step.precision = Precision::tf32;
  } else if (precision == "bf16") {
    throw UsageError("--precision bf16: not implemented yet (choose fp32 or tf32)");
  } else {
    throw UsageError("--precision '" + precision + "': choose fp32 or tf32");
  }
  const std::string timing = vm["timing"].as<std::string>();
  if (timing == "events") {
    step.timing = TimingMode::events;
  } else if (timing == "none") {
    step.timing = TimingMode::none;
  } else {
    throw UsageError("--timing '" + timing + "': choose events or none");
  }
  return step;
}

}  // namespace

void apply_step_options(const StepOptions& step, bool cuda_backend, TrainingSettings& settings) {
  if (!cuda_backend) {
    // The CPU fallback has no graphs, no communication stream and only fp32 BLAS: refuse what it cannot do.
    if (step.graph == Toggle::on) throw UsageError("--graph on: CUDA graphs need the CUDA back-end (device is cpu)");
    if (step.overlap == Toggle::on) throw UsageError("--overlap on: the CPU fallback reduces after backward");
    if (step.precision != Precision::fp32) {
      throw UsageError("--precision " + std::string(precision_name(step.precision)) +
                       ": the CPU fallback is fp32 only");
    }
    if (step.timing != TimingMode::events) throw UsageError("--timing none: the CPU fallback always times phases");
  }
  settings.graph = cuda_backend && step.graph != Toggle::off;
  // auto = off: on 2 x H200 bucketed overlap measured no faster than one reduction after backward (the NCCL kernels
  // take SMs and memory bandwidth from backward and Adam; docs/measurement.md has the figures).
  settings.overlap = cuda_backend && step.overlap == Toggle::on;
  settings.bucket_mb = step.bucket_mb;
  settings.precision = step.precision;
  settings.timing = step.timing;
}

const char* device_choice_name(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::cuda: return "cuda";
    case DeviceChoice::cpu: return "cpu";
    default: return "auto";
  }
}

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
  options.step = parse_step_options(vm);
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
       << "usage: mpirun -np N mgpu_bench [options]   (one rank per GPU)\n\n"
       << describe_options();
  return text.str();
}

}  // namespace mgpu
