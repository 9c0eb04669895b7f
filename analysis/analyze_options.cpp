// Purpose: mgpu_analyze's declared options and the --help made of them (analyze_options.hpp).
#include "analyze_options.hpp"

#include <sstream>
#include <string>
#include <vector>

#include "config/setting_options.hpp"
#include "predict_options.hpp"
#include "stats/statistics.hpp"
#include "table.hpp"
#include "trace_command.hpp"

namespace po = boost::program_options;

namespace mgpu::analysis {
namespace {

// The width --help's option lists are laid out in, as mgpu_bench's are.
constexpr unsigned kHelpColumns = 120;

const char kReportAbout[] =
    "report: per configuration, kept runs (outliers by modified z-score), throughput mean with its 95% Student-t\n"
    "  interval, median, sd, CV, the mean step and its phases, TFLOP/s and peak memory per GPU, throttled runs; the\n"
    "  scaling table (one row per pair: N GPUs against 1 of the same model, global batch and settings, speedup with\n"
    "  Fieller's 95% interval over the runs, or over the trial means paired by trial where measured in trials,\n"
    "  efficiency, both variance components, Welch's t-test, the verdict); per model and GPU count of a batch sweep,\n"
    "  the break-even: every batch where the speedup crosses 1 with its 95% interval, the batches of no clear\n"
    "  difference and the batch from which N GPUs are faster; the timeline of each mean step.\n";

const char kCompareAbout[] =
    "compare: configurations of BEFORE and AFTER paired by model, widths, batch, GPUs, NCCL settings and every other\n"
    "  setting (not hosts or library versions); for each, the after/before throughput ratio with Fieller's 95%\n"
    "  interval, Welch's p and the verdict of the answer's interval rule in its words: faster or slower where the\n"
    "  interval lies wholly beyond 1 +- E, no significant difference where it contains 1, no clear difference where\n"
    "  it excludes 1 but not the band; configurations found on one side only are listed. A side of several files\n"
    "  (comma-separated: the processes of one build, in turn with the other's) counts each file's configuration as a\n"
    "  trial of it.\n";

const char kPredictAbout[] =
    "predict: a cost model of one training step from measured rates (docs/prediction.md): GEMMs from the probe at\n"
    "  their shapes, elementwise kernels and Adam from its copy bandwidth and graph-node cost, the gradient\n"
    "  all-reduce from the sweep at that rank count, else the alpha-beta cost model of ring and tree all-reduce (or\n"
    "  the cluster cost model). Per GPU count and global batch: predicted phases, step, throughput and speedup; the\n"
    "  break-even batch per GPU count; a recommendation.\n";

const char kBadInput[] =
    "Bad input (a missing, empty or non-HDF5 file, a missing dataset, a newer schema_version) is one line naming the\n"
    "file and the problem, exit status 1.\n";

std::string usage_text() {
  const std::string format = format_usage();
  return "usage: mgpu_analyze report FILE.h5 [FILE.h5 ...]" + format +
         " [--out DIR]\n"
         "                           [--outlier-threshold M] [--include-warmup] [--no-scaling] [--per-trial]\n"
         "                           [--require-baseline]\n"
         "       mgpu_analyze compare BEFORE.h5[,MORE.h5...] AFTER.h5[,MORE.h5...] [--alpha A] [--min-effect E]\n"
         "                           [--ignore-nccl-settings] [--ignore-setting NAME ...]" +
         format +
         "\n"
         "       mgpu_analyze predict --probe FILE.h5 [--allreduce FILE.h5 ...]\n"
         "                           ((--model M | --layers W,...) --batch B,... [--gpus N,...] | --check RESULTS.h5)\n"
         "                           [--precision P] [--link NAME | --link-bandwidth GB/s --link-latency us]\n"
         "                           [--cluster NxG | [--nodes N] --gpus-per-node G] [--nics-per-node K]\n"
         "                           [--published TABLE.json ...]" +
         format +
         " [--out DIR]\n"
         "       mgpu_analyze predict --published TABLE.json [...]" +
         format +
         "\n"
         "       mgpu_analyze --help | --version\n" +
         kTraceUsage;
}

}  // namespace

std::string format_usage() {
  std::string names;
  for (const char* name : command_line_names<Format>()) names += (names.empty() ? "" : "|") + std::string(name);
  return " [--format " + names + "]";
}

void describe_format_option(po::options_description& description, const char* help) {
  const std::string text = named_option_help<Format>(help);
  description.add_options()(
      "format", po::value<std::string>()->default_value(setting_name(Format::terminal))->value_name("F"), text.c_str());
}

po::options_description report_options() {
  po::options_description description(kHelpColumns);
  describe_format_option(description, "how the tables are written");
  // clang-format off
  description.add_options()
    ("out", po::value<std::string>()->default_value("")->value_name("DIR"),
     "also write report.<txt|md|csv|json> there (and one CSV per table with --format csv), report.html (one "
     "self-contained page: answer, plots, tables, run conditions), with gnuplot plots (.png, .svg, .dat, .gp): phases "
     "per configuration, speedup and throughput vs batch, efficiency vs GPUs (more than two GPU counts)")
    ("outlier-threshold", po::value<double>()->default_value(stats::kDefaultOutlierThreshold)->value_name("M"),
     "exclude runs with |modified z| > M")
    ("include-warmup", po::bool_switch(), "count the warm-up steps as measured steps (excluded by default)")
    ("no-scaling", po::bool_switch(), "leave the scaling table out")
    ("per-trial", po::bool_switch(),
     "show the per-trial table on screen too (each trial against the other side's trial it pairs with, from its own "
     "file where it has one, over its runs; always in CSV and JSON)")
    ("require-baseline", po::bool_switch(),
     "exit status 3 when an N-GPU configuration has no 1-GPU baseline (one error line each); without it the report "
     "notes the mgpu_bench command that measures the baseline, exit 0");
  // clang-format on
  return description;
}

po::options_description compare_options() {
  po::options_description description(kHelpColumns);
  // clang-format off
  description.add_options()
    ("alpha", po::value<double>()->default_value(0.05, "0.05")->value_name("A"),
     "the interval's level is 1 - A (0.05: 95%, the answer's)")
    ("min-effect", po::value<double>()->default_value(stats::kMinimumEffect)->value_name("E"),
     "the band E either side of 1 (the default: the answer's)")
    ("ignore-nccl-settings", po::bool_switch(),
     "pair configurations that differ only in NCCL algorithm/protocol")
    ("ignore-setting", po::value<std::vector<std::string>>()->default_value({}, "")->composing()->value_name("NAME"),
     "pair configurations whatever their setting NAME (a paired attribute, e.g. precision; per-batch: every setting "
     "--X auto decides per batch, so two builds' defaults pair)");
  // clang-format on
  describe_format_option(description, "how the table is written");
  return description;
}

std::string analyze_help() {
  std::ostringstream text;
  text << usage_text() << "\n"
       << "mgpu_analyze summarises mgpu_bench results files from their raw per-step, per-rank data, following the\n"
       << "statistics of docs/statistics.md, which states every formula.\n\n"
       << kReportAbout << report_options() << kCompareAbout << compare_options() << kPredictAbout
       << predict_option_description() << kBadInput << kTraceAbout << trace_option_description();
  return text.str();
}

}  // namespace mgpu::analysis
