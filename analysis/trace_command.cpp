// Purpose: `mgpu_analyze trace` (trace_command.hpp).
#include "trace_command.hpp"

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "left_out.hpp"
#include "platform/error.hpp"
#include "plots.hpp"  // write_text
#include "results/results_reader.hpp"
#include "trace.hpp"

namespace po = boost::program_options;

namespace mgpu::analysis {

const char kTraceUsage[] =
    "       mgpu_analyze trace FILE.h5 [--configuration NAME] [--runs R1,R2|all|slowest|median|fastest]\n"
    "                          [-o trace.json]\n";

const char kTraceAbout[] =
    "trace: the steps of FILE.h5 as a Chrome trace-event JSON for ui.perfetto.dev or chrome://tracing: one process\n"
    "  per configuration; per rank a compute track (run > step > forward, backward, exposed_comm, optimizer) and a\n"
    "  communication track (allreduce); warm-up steps marked; clocks and throttling per run as counters; every\n"
    "  attribute of the configuration on its 'configuration settings' marker. Durations are the file's values;\n"
    "  positions follow docs/report.md (ranks aligned where each step's reduction ends). Steps timed without phase\n"
    "  marks show whole.\n";

po::options_description trace_option_description() {
  po::options_description description(120);
  // clang-format off
  description.add_options()
    ("configuration", po::value<std::string>()->value_name("NAME"),
     "only this configuration (its group name; default: every configuration)")
    ("runs", po::value<std::string>()->default_value("median")->value_name("SEL"),
     "run indices (0-based, e.g. 0,3), all, or the run of lowest, median or highest throughput (slowest, median, "
     "fastest)")
    ("output,o", po::value<std::string>()->default_value("trace.json")->value_name("PATH"),
     "where to write the JSON");
  // clang-format on
  return description;
}

int run_trace_command(int argc, char** argv) {
  po::options_description described = trace_option_description();
  described.add_options()("help,h", "")("files", po::value<std::vector<std::string>>()->default_value({}, ""), "");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  try {
    // The parser skips argv[0], the command's name.
    po::store(po::command_line_parser(argc, argv).options(described).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(std::string("trace: ") + e.what());
  }
  if (vm.count("help") > 0) {
    std::fputs(kTraceUsage, stdout);
    std::fputs(kTraceAbout, stdout);
    std::cout << trace_option_description();
    return 0;
  }
  const std::vector<std::string> files = vm["files"].as<std::vector<std::string>>();
  if (files.size() != 1)
    throw UsageError("trace: expected one results file, FILE.h5; got " + std::to_string(files.size()));
  const RunSelection selection = parse_run_selection(vm["runs"].as<std::string>());
  const std::string output = vm["output"].as<std::string>();
  if (output.empty()) throw UsageError("trace: -o '': give a file name");

  const ResultsFile file = read_results_file(files.front());
  std::vector<const ConfigurationResults*> chosen;
  if (vm.count("configuration") > 0) {
    chosen.push_back(&file.configuration(vm["configuration"].as<std::string>()));
  } else {
    for (const ConfigurationResults& c : file.configurations) chosen.push_back(&c);
  }
  std::vector<stats::ConfigurationStats> stats;
  for (const ConfigurationResults* c : chosen) {
    if (c->runs() == 0) {
      std::fprintf(stderr, "%s\n", no_completed_run_warning(file.path, *c).c_str());
      continue;
    }
    // Every step is shown, warm-up included (marked); the statistics only choose runs by throughput.
    stats.push_back(stats::compute_configuration_stats(*c, file.path, {}));
  }
  if (stats.empty()) throw UsageError("'" + file.path + "' holds no configuration with a completed run");
  const nlohmann::json trace = chrome_trace(stats, selection);
  write_text(output, trace.dump() + "\n");
  std::printf("wrote '%s': %zu events from %zu configuration(s); open it in ui.perfetto.dev or chrome://tracing\n",
              output.c_str(), trace.at("traceEvents").size(), stats.size());
  return 0;
}

}  // namespace mgpu::analysis
