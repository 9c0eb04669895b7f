// Purpose: command-line parsing and validation; every rejection is one line naming the option and the bad value.
#include "cli/options.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <type_traits>

#include "cli/option_parsing.hpp"
#include "config/resolver.hpp"
#include "config/setting_options.hpp"
#include "platform/build_info.hpp"
#include "platform/error.hpp"

namespace po = boost::program_options;

namespace mgpu {
namespace {

// Options a study file (--config) may set: everything that describes the study. --config, --force, --resume, --help
// and --version concern one invocation and are command-line only.
po::options_description describe_study_options() {
  po::options_description description("study options (command line or --config file)", 120);
  describe_setting_options(description);  // every setting an option sets, in the settings table's order
  const BenchOptions defaults;
  // clang-format off
  description.add_options()
    ("sweep", po::value<std::vector<std::string>>(),
     "MODEL:B1,B2,... one model with its own batches (repeatable; instead of --model/--batch)")
    ("max-noise", po::value<std::string>()->default_value(setting_text(defaults.max_noise_percent)),
     "percent: a configuration stops once its throughput interval is narrow enough for a speedup interval of this "
     "relative half-width (at least 10 runs; 0 = off; off by default when --runs is given)")
    ("max-time", po::value<std::string>()->default_value(setting_text(defaults.max_time_seconds)),
     "seconds of runs per configuration, after which it stops (at least 5 runs; 0 = no limit)")
    ("trials", po::value<std::string>()->default_value(setting_text(defaults.trials), "auto"),
     "trials per configuration, each its own set-up and GEMM tuning; with 2 or more the speedup's interval comes from "
     "the trial means; auto: 5 to 10, until every speedup's trial interval is within --max-noise or --max-time is "
     "spent (left out: auto on GPUs where a batch runs on 1 GPU and on more, else 1; with --resume, the file's)")
    ("device", po::value<std::string>()->default_value(setting_name(defaults.device)),
     named_option_help<DeviceChoice>("the back-end").c_str())
    ("gemm-plan", po::value<std::string>(),
     "FILE.h5: an earlier job's results on this machine (GPU model, driver, cuBLAS); each configuration runs the GEMM "
     "plan its namesake there ran (verified, not tuned) instead of tuning its own")
    ("output", po::value<std::string>(),
     "results file (HDF5); default mgpu_bench_<model>_b<batch>_n<GPU counts>.h5 (one model and batch, e.g. "
     "mgpu_bench_large_b32_n1-2.h5) or mgpu_bench_sweep_<count>configs.h5");
  // clang-format on
  return description;
}

po::options_description describe_options() {
  po::options_description description("mgpu_bench options", 120);
  description.add(describe_study_options());
  po::options_description invocation("invocation options (command line only)", 120);
  // clang-format off
  invocation.add_options()
    ("config", po::value<std::string>(),
     "study file of `name = value` lines (bench/*.ini); the command line overrides it")
    ("resume", "continue the output file: skip configurations already complete, rerun an incomplete one")
    ("force", "overwrite an existing output file")
    ("timeout", po::value<std::string>(), "watchdog: stop the job with one line when any rank makes no progress for "
     "this many seconds (0 = never), MPI_Init included; default max(60, 10 x the configuration's longest run), 60 "
     "in start-up; 600 for a job of one rank, which waits for no other (docs/reliability.md)")
    ("help,h", "show this help")
    ("version", "show the version and git revision");
  // clang-format on
  description.add(invocation);
  return description;
}

StepRequest parse_step_options(const po::variables_map& vm) {
  StepRequest step;
  for_each_step_option([&](const auto& row) { step.*row.request = parse_step_option(row, vm); });
  return step;
}

}  // namespace

SweepEntry parse_sweep_entry(const std::string& text, long long max_batch) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw UsageError("--sweep '" + text + "': write MODEL:B1,B2,... (e.g. medium:8,16,32)");
  SweepEntry entry;
  entry.model = preset_model(text.substr(0, colon));
  entry.global_batches = parse_int_list("--sweep " + text.substr(0, colon), text.substr(colon + 1), 1, max_batch);
  return entry;
}

std::vector<int> BenchOptions::gpu_counts(int ranks) const {
  if (!gpus.empty()) return gpus;
  return ranks > 1 ? std::vector<int>{1, ranks} : std::vector<int>{1};
}

std::size_t BenchOptions::configuration_count(int ranks) const {
  std::size_t batches = 0;
  for (const SweepEntry& entry : sweep) batches += entry.global_batches.size();
  return batches * gpu_counts(ranks).size();
}

std::string BenchOptions::default_output_path(int ranks) const {
  const std::vector<int> counts = gpu_counts(ranks);
  const std::size_t count = configuration_count(ranks);
  if (count != counts.size()) return "mgpu_bench_sweep_" + std::to_string(count) + "configs.h5";
  std::string label = configuration_stem(sweep.front().model, sweep.front().global_batches.front(), counts.front());
  for (std::size_t i = 1; i < counts.size(); ++i) label += "-" + std::to_string(counts[i]);
  return "mgpu_bench_" + label + ".h5";
}

namespace {

// The command line and the study file, kept apart where it matters which one gave an option (the grid), merged
// (command line first: Boost keeps the first value stored) for everything else.
struct OptionSources {
  po::variables_map command_line;
  po::variables_map file;
  po::variables_map merged;
  std::string file_path;

  static bool given_in(const po::variables_map& vm, const char* name) {
    return vm.count(name) > 0 && !vm[name].defaulted();
  }
  // Prefixes a message about a value that came from the study file with the file's name.
  std::string origin(const char* name) const {
    return !file_path.empty() && !given_in(command_line, name) && given_in(file, name)
               ? "--config '" + file_path + "': "
               : "";
  }
};

// Every name on the command line (or in the file) must be a study option there; reads the file after the command line
// so its values only fill what the command line left open.
OptionSources read_option_sources(int argc, const char* const* argv) {
  OptionSources sources;
  option_parsing::parse_strict(describe_options(), argc, argv, "", "every option starts with --; see --help",
                               sources.command_line, false, &sources.merged);
  if (sources.command_line.count("config")) {
    sources.file_path = sources.command_line["config"].as<std::string>();
    std::ifstream stream(sources.file_path);
    if (!stream) throw UsageError("--config '" + sources.file_path + "': cannot open the file");
    try {
      // Parsed twice: alone (to know what the file gave) and into the merged map after the command line.
      // The parsed options point into the description: it must outlive both stores.
      const po::options_description study = describe_study_options();
      const po::parsed_options parsed = po::parse_config_file(stream, study);
      po::store(parsed, sources.file);
      po::store(parsed, sources.merged);
    } catch (const po::error& e) {
      throw UsageError("--config '" + sources.file_path + "': " + e.what());
    }
  }
  po::notify(sources.merged);
  return sources;
}

template <typename Parse>
auto with_origin(const OptionSources& sources, const char* name, Parse&& parse) {
  try {
    return parse();
  } catch (const UsageError& e) {
    throw UsageError(sources.origin(name) + e.what());
  }
}

// The grid (see the option help and bench/README.md): `sweep` entries, or every --model with every --batch. A
// command-line --model keeps only the study file's entries for those models; a command-line --batch replaces every
// entry's batches.
std::vector<SweepEntry> read_grid(const OptionSources& sources) {
  const po::variables_map& cl = sources.command_line;
  const po::variables_map& file = sources.file;
  const auto names_model_or_batch = [](const po::variables_map& vm) {
    return vm.count("model") + vm.count("batch") + vm.count("layers") > 0;
  };
  if (file.count("sweep") && names_model_or_batch(file))
    throw UsageError("--config '" + sources.file_path + "': give either sweep entries or model/batch/layers, not both");
  if (cl.count("sweep") && names_model_or_batch(cl))
    throw UsageError("--sweep excludes --model, --batch and --layers: give the batches in each MODEL:B1,B2 entry");
  if (sources.merged.count("model") && sources.merged.count("layers") && !cl.count("sweep"))
    throw UsageError("--model and --layers exclude each other: give one");

  const bool dropout_given = sources.merged.count("dropout") > 0;
  const double dropout = dropout_given ? sources.merged["dropout"].as<double>() : 0.0;
  // The preset's widths with another dropout (e.g. 0 for exact cross-rank comparisons); still named the preset.
  const auto with_dropout = [&](MlpSpec model) {
    if (!dropout_given) return model;
    MlpSpec changed = custom_model(model.widths, dropout);
    changed.name = model.name;
    return changed;
  };
  std::vector<SweepEntry> entries;
  const po::variables_map& sweep_source = cl.count("sweep") ? cl : file;
  if (sweep_source.count("sweep")) {
    for (const std::string& text : sweep_source["sweep"].as<std::vector<std::string>>()) {
      SweepEntry entry =
          with_origin(sources, "sweep", [&] { return parse_sweep_entry(text, static_cast<long long>(kMaxBatch)); });
      for (const SweepEntry& earlier : entries)
        if (earlier.model.name == entry.model.name)
          throw UsageError(sources.origin("sweep") + "--sweep: names model '" + entry.model.name +
                           "' twice; give all its batches in one entry");
      entry.model = with_dropout(entry.model);
      entries.push_back(std::move(entry));
    }
    if (cl.count("layers")) throw UsageError("--layers excludes the study file's sweep entries: use --model");
    if (cl.count("model")) {
      std::vector<SweepEntry> kept;
      for (const std::string& name : parse_model_list(cl["model"].as<std::string>())) {
        const auto match = std::find_if(entries.begin(), entries.end(),
                                        [&](const SweepEntry& entry) { return entry.model.name == name; });
        if (match == entries.end())
          throw UsageError("--model " + name + ": the study file '" + sources.file_path +
                           "' has no sweep entry for it");
        kept.push_back(*match);
      }
      entries = kept;
    }
    if (cl.count("batch")) {
      const std::vector<int> batches = parse_number_list_option("batch", cl["batch"].as<std::string>());
      for (SweepEntry& entry : entries) entry.global_batches = batches;
    }
    return entries;
  }

  const std::vector<int> batches =
      sources.merged.count("batch")
          ? with_origin(sources, "batch",
                        [&] { return parse_number_list_option("batch", sources.merged["batch"].as<std::string>()); })
          : std::vector<int>{TrainingSettings{}.global_batch};
  if (sources.merged.count("layers")) {
    const MlpSpec model = with_origin(sources, "layers", [&] {
      return custom_model(parse_layer_widths(sources.merged["layers"].as<std::string>()), dropout);
    });
    return {SweepEntry{model, batches}};
  }
  const std::vector<std::string> models =
      sources.merged.count("model")
          ? with_origin(sources, "model", [&] { return parse_model_list(sources.merged["model"].as<std::string>()); })
          : std::vector<std::string>{kDefaultPreset};
  for (const std::string& name : models) entries.push_back(SweepEntry{with_dropout(preset_model(name)), batches});
  return entries;
}

}  // namespace

BenchOptions parse_options(int argc, const char* const* argv) {
  BenchOptions options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);

  const OptionSources sources = read_option_sources(argc, argv);
  const po::variables_map& vm = sources.merged;
  options.show_help = vm.count("help") > 0;
  options.show_version = vm.count("version") > 0;
  if (options.show_help || options.show_version) return options;

  options.config_path = sources.file_path;
  options.sweep = read_grid(sources);
  if (vm.count("gpus")) {
    options.gpus =
        with_origin(sources, "gpus", [&] { return parse_number_list_option("gpus", vm["gpus"].as<std::string>()); });
  }
  // Every recorded setting an option sets (--warmup, --steps, --runs, --seed, --nccl-algo, ...), from its row.
  for_each_setting_row([&](const auto& row) {
    if constexpr (!kIsStepOption<decltype(row)>)
      if (row.option != nullptr)
        with_origin(sources, row.option, [&] { parse_recorded_option(row, vm, options.settings); });
  });
  const std::string trials = vm["trials"].as<std::string>();
  options.trials_given = !vm["trials"].defaulted();
  options.adaptive_trials = trials == "auto";
  options.trials = options.adaptive_trials ? kMaxAutoTrials
                                           : with_origin(sources, "trials", [&] { return parse_trial_count(trials); });
  options.max_noise_percent =
      with_origin(sources, "max-noise", [&] { return parse_max_noise(vm["max-noise"].as<std::string>()); });
  // A --runs given asks for that many runs: the noise rule then stops a configuration only when asked for as well.
  if (!vm["runs"].defaulted() && vm["max-noise"].defaulted()) options.max_noise_percent = 0;
  options.max_time_seconds =
      with_origin(sources, "max-time", [&] { return parse_max_time(vm["max-time"].as<std::string>()); });
  options.device = with_origin(sources, "device",
                               [&] { return parse_named<DeviceChoice>("device", vm["device"].as<std::string>()); });
  if (vm.count("output")) {
    options.output_path = vm["output"].as<std::string>();
    if (options.output_path.empty()) throw UsageError(sources.origin("output") + "--output '': give a file name");
  }
  if (vm.count("gemm-plan")) {
    options.gemm_plan_path = vm["gemm-plan"].as<std::string>();
    if (options.gemm_plan_path.empty())
      throw UsageError(sources.origin("gemm-plan") + "--gemm-plan '': give a results file of an earlier job");
  }
  options.force = vm.count("force") > 0;
  options.resume = vm.count("resume") > 0;
  if (options.force && options.resume)
    throw UsageError("--resume and --force exclude each other: --resume keeps the file, --force replaces it");
  if (options.adaptive_trials && options.resume)
    throw UsageError(
        "--trials auto and --resume exclude each other: how many trials a batch still needs depends on "
        "the trials measured before; resume with the number of trials, e.g. --trials 3");
  options.step = parse_step_options(vm);
  check_step_request(options.step);  // what no back-end runs, refused before any work
  if (vm.count("timeout")) options.timeout_seconds = parse_timeout_seconds(vm["timeout"].as<std::string>());
  return options;
}

void validate_for_ranks(const BenchOptions& options, int ranks) {
  for (int k : options.gpus) {
    if (k > ranks) {
      throw UsageError("--gpus " + std::to_string(k) + ": the job has only " + std::to_string(ranks) +
                       (ranks == 1 ? " rank" : " ranks") + " (start it with at least " + std::to_string(k) + ")");
    }
  }
  const std::vector<int> counts = options.gpu_counts(ranks);
  for (const SweepEntry& entry : options.sweep) {
    for (int batch : entry.global_batches) {
      for (int k : counts) {
        if (batch % k != 0) {
          throw UsageError("--batch " + std::to_string(batch) + ": the global batch must be divisible by the " +
                           std::to_string(k) + " ranks" +
                           (options.gpus.empty() ? "" : " of --gpus " + std::to_string(k)));
        }
      }
    }
  }
}

std::string help_text() {
  std::ostringstream text;
  text << "mgpu_bench " << project_version() << ": data-parallel MLP training benchmark (MPI + NCCL + cuBLAS)\n"
       << "usage: mpirun -np N mgpu_bench [options]   (one rank per GPU)\n"
       << "       mgpu_bench allreduce --help | mgpu_bench probe --help   (the measurement subcommands)\n"
       << "       mgpu_bench replay FILE.h5   (a job's console, re-made from its results file)\n\n"
       << describe_options();
  return text.str();
}

}  // namespace mgpu
