// Purpose: mgpu_analyze's command line (Boost.Program_options): `report` and `compare` over results files (`trace` in
// trace_command.cpp), and the one place errors become exit codes (0 done, 1 bad input, 3 with --require-baseline:
// report written but N-GPU configurations lack a 1-GPU baseline).
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyze_options.hpp"
#include "answer_json.hpp"
#include "break_even_curves.hpp"
#include "html_report.hpp"
#include "left_out.hpp"
#include "missing_baseline.hpp"
#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "platform/exact_options.hpp"
#include "plots.hpp"
#include "predict_options.hpp"
#include "report_tables.hpp"
#include "results/results_reader.hpp"
#include "series.hpp"
#include "stats/answer.hpp"
#include "stats/compare.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/speedup_interval.hpp"
#include "table.hpp"
#include "timeline.hpp"
#include "trace_command.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace mgpu;
using namespace mgpu::analysis;

namespace {

constexpr int kExitNoBaseline = 3;

struct ReportOptions {
  std::vector<std::string> files;
  Format format = Format::terminal;
  std::string out_dir;
  stats::AnalysisOptions analysis;
  bool scaling = true;
  bool per_trial = false;
  bool require_baseline = false;
};

// Reads every file first, so one bad file stops everything before any output.
std::vector<ResultsFile> load(const std::vector<std::string>& paths) {
  std::vector<ResultsFile> files;
  files.reserve(paths.size());
  for (const std::string& path : paths) {
    files.push_back(read_results_file(path));
    if (files.back().configurations.empty()) throw UsageError("'" + path + "' holds no configurations");
  }
  return files;
}

// The statistics of every configuration with a completed run; they point into files, which must outlive them.
std::vector<stats::ConfigurationStats> analyse(const std::vector<ResultsFile>& files,
                                               const stats::AnalysisOptions& options) {
  std::vector<stats::ConfigurationStats> stats;
  for (const ResultsFile& file : files)
    for (const ConfigurationResults& c : file.configurations) {
      if (c.runs() == 0) {
        std::fprintf(stderr, "%s\n", analysis::no_completed_run_warning(file.path, c).c_str());
        continue;
      }
      stats.push_back(stats::compute_configuration_stats(c, file.path, options));
    }
  if (stats.empty()) throw UsageError("no configuration with a completed run in the files given");
  return stats;
}

// Where each file comes from, as its root attributes say: what a page citing it states beside its figures.
nlohmann::json provenance_json(const std::vector<ResultsFile>& files) {
  nlohmann::json provenance = nlohmann::json::array();
  for (const ResultsFile& file : files) {
    std::set<std::string> command_lines;  // one per job that wrote configurations of the file
    for (const ConfigurationResults& c : file.configurations) command_lines.insert(c.metadata.command_line);
    provenance.push_back({{"file", file.path},
                          {"producer", file.root.producer},
                          {"project_version", file.root.project_version},
                          {"git_revision", file.root.git_revision},
                          {"created_utc", file.root.created_utc},
                          {"command_lines", command_lines}});
  }
  return provenance;
}

// The whole output in one format; JSON also carries the settings and methods, the files' provenance and the report's
// answer in words.
std::string render_report(const std::vector<Table>& tables, Format format, const std::string& timeline,
                          const nlohmann::json& settings, const nlohmann::json& answer = nullptr,
                          const nlohmann::json& provenance = nullptr) {
  if (format == Format::json) {
    nlohmann::json json = {{"tool", "mgpu_analyze"},
                           {"version", project_version()},
                           {"settings", settings},
                           {"tables", tables_to_json(tables)}};
    if (!answer.is_null()) json["answer"] = answer;
    if (!provenance.is_null()) json["provenance"] = provenance;
    return json.dump(2) + "\n";
  }
  std::string text = render_tables(tables, format);
  if (!timeline.empty() && format == Format::terminal) text += "\n" + timeline;
  if (!timeline.empty() && format == Format::markdown) text += "\n### Timeline\n\n```\n" + timeline + "```\n";
  return text;
}

void prepare_directory(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) throw UsageError("--out " + dir + ": cannot create the directory");
}

int run_report(const ReportOptions& options) {
  if (options.files.empty()) throw UsageError("report: no results file given");
  if (!options.out_dir.empty()) prepare_directory(options.out_dir);
  const std::vector<ResultsFile> files = load(options.files);
  const std::vector<stats::ConfigurationStats> stats = analyse(files, options.analysis);
  // Where the step goes, one row per configuration (its trials merged); the runs' statistics per trial.
  std::vector<Table> tables = {configurations_table(stats, options.analysis), phases_table(trials_merged(stats))};
  // The answer, computed once: every table, plot and sentence below reads it.
  const stats::Answer answer = stats::compute_answer(stats);
  bool multi_gpu = false;
  for (const stats::ConfigurationStats& s : stats) multi_gpu = multi_gpu || s.results->ranks() > 1;
  if (options.scaling && multi_gpu) {
    tables.push_back(scaling_table(answer));
    if (answer.any_trials()) tables.push_back(per_trial_table(answer, options.per_trial));
    if (!answer.break_evens.empty()) {
      tables.push_back(break_even_table(answer.break_evens));
      tables.push_back(crossings_table(answer.break_evens));
      tables.push_back(bands_table(answer.break_evens));
    }
  }
  tables.push_back(runs_table(stats));
  const nlohmann::json settings = {{"confidence", stats::kConfidence},
                                   {"min_effect", stats::kMinimumEffect},
                                   {"outlier_threshold", options.analysis.outlier_threshold},
                                   {"include_warmup", options.analysis.include_warmup},
                                   {"minimum_runs_for_interval", stats::kMinimumRunsForInterval},
                                   {"ratio_interval_method", stats::kRatioIntervalMethod},
                                   {"files", options.files}};
  const std::string timeline = render_timeline(trials_merged(stats));
  std::string files_text;
  for (const std::string& file : options.files) files_text += (files_text.empty() ? "" : " ") + file;
  const std::string report = render_report(tables, options.format, timeline, settings,
                                           answer_to_json(answer, files_text), provenance_json(files));
  std::fputs(report.c_str(), stdout);
  std::fflush(stdout);

  if (!options.out_dir.empty()) {
    const fs::path dir(options.out_dir);
    write_text((dir / (std::string("report.") + format_extension(options.format))).string(), report);
    if (options.format == Format::csv)
      for (const Table& table : tables) write_text((dir / (table.key + ".csv")).string(), render_csv(table));
    const PlotOutcome plots = write_plots(options.out_dir, stats, answer);
    write_text((dir / "report.html").string(),
               render_html_report({options.files, stats, answer, tables, timeline, plots, options.out_dir}));
    if (!plots.gnuplot_found)
      std::fprintf(stderr,
                   "mgpu_analyze: note: gnuplot not found on PATH: plots not drawn (their data and scripts are in "
                   "'%s'); the tables are written\n",
                   options.out_dir.c_str());
  }
  // A missing baseline is a note in the report (a user's first 2-GPU run has none); scripts that need every speedup
  // ask for the error with --require-baseline. The report stands either way.
  if (!options.require_baseline) return 0;
  for (const stats::ConfigurationStats* s : answer.scaling.without_baseline)
    std::fprintf(stderr, "mgpu_analyze: error: %s\n", missing_baseline_note(*s).c_str());
  return answer.scaling.without_baseline.empty() ? 0 : kExitNoBaseline;
}

// "a.h5,b.h5": the files of one side of compare, in order.
std::vector<std::string> side_files(const std::string& text) {
  std::vector<std::string> paths;
  std::size_t begin = 0;
  for (std::size_t comma = text.find(',');; comma = text.find(',', begin)) {
    paths.push_back(text.substr(begin, comma - begin));
    if (paths.back().empty()) throw UsageError("compare: '" + text + "': an empty file name in the list");
    if (comma == std::string::npos) return paths;
    begin = comma + 1;
  }
}

int run_compare(const std::string& before_path, const std::string& after_path, const stats::CompareOptions& options,
                Format format) {
  const std::vector<ResultsFile> before_files = load(side_files(before_path));
  const std::vector<ResultsFile> after_files = load(side_files(after_path));
  const stats::AnalysisOptions analysis;
  const std::vector<stats::ConfigurationStats> before = analyse(before_files, analysis);
  const std::vector<stats::ConfigurationStats> after = analyse(after_files, analysis);
  const stats::Comparison comparison = stats::compare_results(before, after, options);
  const std::vector<Table> tables = {comparison_table(comparison, options)};
  const nlohmann::json settings = {{"confidence", options.confidence},
                                   {"alpha", 1 - options.confidence},
                                   {"min_effect", options.min_effect},
                                   {"match_nccl_settings", options.match_nccl_settings},
                                   {"ignored_settings", options.ignored_settings},
                                   {"outlier_threshold", analysis.outlier_threshold},
                                   {"ratio_interval_method", stats::kRatioIntervalMethod},
                                   {"before", before_path},
                                   {"after", after_path}};
  std::fputs(render_report(tables, format, "", settings).c_str(), stdout);
  return 0;
}

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// A value of an option that must lie in [low, high), or in (low, high) when low_open.
double option_in_range(const po::variables_map& vm, const char* name, double low, bool low_open, double high) {
  const double value = vm[name].as<double>();
  if (!((low_open ? value > low : value >= low) && value < high))
    throw UsageError(std::string("--") + name + " " + number_text(value) + ": expected a value in " +
                     (low_open ? "(" : "[") + number_text(low) + ", " + number_text(high) + ")");
  return value;
}

int run(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command given: expected report, compare, trace or predict (see --help)");
  const std::string command = argv[1];
  if (command == "--help" || command == "-h") {
    std::fputs(analyze_help().c_str(), stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("mgpu_analyze %s (git %s)\n", project_version(), git_revision());
    return 0;
  }
  if (command == "trace") return run_trace_command(argc - 1, argv + 1);
  if (command == "predict") {
    bool help = false;
    const PredictOptions options = parse_predict_options(argc - 1, argv + 1, &help);
    if (help) {
      std::fputs(analyze_help().c_str(), stdout);
      return 0;
    }
    return run_predict(options);
  }
  if (command != "report" && command != "compare")
    throw UsageError("unknown command '" + command + "': expected report, compare, trace or predict (see --help)");

  po::options_description described = command == "report" ? report_options() : compare_options();
  described.add_options()("help,h", "")("files", po::value<std::vector<std::string>>()->default_value({}, ""), "");
  po::positional_options_description positional;
  positional.add("files", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc - 1, argv + 1)
                  .options(described)
                  .positional(positional)
                  .style(kExactOptions)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(command + ": " + option_error_message(e, described));
  }
  if (vm.count("help") > 0) {
    std::fputs(analyze_help().c_str(), stdout);
    return 0;
  }
  const Format format = parse_format(vm["format"].as<std::string>());
  const std::vector<std::string> files = vm["files"].as<std::vector<std::string>>();
  if (command == "report") {
    ReportOptions options;
    options.files = files;
    options.format = format;
    options.out_dir = vm["out"].as<std::string>();
    options.analysis.outlier_threshold = vm["outlier-threshold"].as<double>();
    if (!(options.analysis.outlier_threshold > 0))
      throw UsageError("--outlier-threshold " + number_text(options.analysis.outlier_threshold) +
                       ": expected a positive number");
    options.analysis.include_warmup = vm["include-warmup"].as<bool>();
    options.scaling = !vm["no-scaling"].as<bool>();
    options.per_trial = vm["per-trial"].as<bool>();
    options.require_baseline = vm["require-baseline"].as<bool>();
    return run_report(options);
  }
  if (files.size() != 2)
    throw UsageError("compare: expected two files, BEFORE.h5 AFTER.h5; got " + std::to_string(files.size()));
  stats::CompareOptions options;
  // Left at its default, the answer's own 95% (1 - 0.05 is not that double to the last bit).
  if (!vm["alpha"].defaulted()) options.confidence = 1 - option_in_range(vm, "alpha", 0, true, 1);
  options.min_effect = option_in_range(vm, "min-effect", 0, false, 1);
  options.match_nccl_settings = !vm["ignore-nccl-settings"].as<bool>();
  options.ignored_settings = vm["ignore-setting"].as<std::vector<std::string>>();
  for (const std::string& name : options.ignored_settings)
    if (!stats::is_ignorable_setting(name))
      throw UsageError("--ignore-setting " + name + ": not a setting compare pairs on (nor " +
                       stats::kPerBatchSettings + ")");
  return run_compare(files[0], files[1], options, format);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "mgpu_analyze: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mgpu_analyze: error: %s\n", e.what());
    return 1;
  }
}
