// Purpose: parse_predict_options (predict_options.hpp).
#include "predict_options.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <sstream>

#include "analyze_options.hpp"
#include "config/setting_options.hpp"
#include "model/mlp_spec.hpp"
#include "platform/error.hpp"
#include "platform/exact_options.hpp"
#include "predict/cluster_shape.hpp"
#include "results/attribute_text.hpp"

namespace mgpu::analysis {
namespace {

namespace po = boost::program_options;

// "8,32,128" -> {8, 32, 128}: each a whole number in [1, max]; UsageError naming the option and the bad item.
std::vector<long long> positive_list(const std::string& option, const std::string& text, long long max) {
  std::vector<long long> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < 1 || value > max)
      throw UsageError("--" + option + " '" + text + "': '" + item + "' is not a whole number from 1 to " +
                       std::to_string(max));
    values.push_back(value);
  }
  if (values.empty() || text.back() == ',') throw UsageError("--" + option + " '" + text + "': empty list");
  return values;
}

// A whole number from 1 to 1024 given as option `name`; UsageError naming it otherwise.
int count_option(const po::variables_map& vm, const std::string& name) {
  const std::string text = vm[name].as<std::string>();
  const std::vector<long long> values = positive_list(name, text, 1024);
  if (values.size() != 1) throw UsageError("--" + name + " '" + text + "': expected one whole number from 1 to 1024");
  return int(values.front());
}

// --cluster NxG or --nodes N with --gpus-per-node G, and --nics-per-node K (docs/cluster.md).
void parse_cluster(const po::variables_map& vm, PredictOptions& options) {
  if (vm.count("cluster")) {
    if (vm.count("nodes") || vm.count("gpus-per-node"))
      throw UsageError("predict: give --cluster NxG or --nodes and --gpus-per-node, not both");
    const predict::ClusterShape shape = predict::parse_cluster_shape("cluster", vm["cluster"].as<std::string>());
    options.nodes = shape.nodes;
    options.gpus_per_node = shape.gpus_per_node;
  } else {
    if (vm.count("nodes") && !vm.count("gpus-per-node"))
      throw UsageError("predict: --nodes needs --gpus-per-node G (or give --cluster NxG)");
    if (vm.count("gpus-per-node")) options.gpus_per_node = count_option(vm, "gpus-per-node");
    if (vm.count("nodes")) options.nodes = count_option(vm, "nodes");
  }
  if (vm.count("nics-per-node")) {
    if (options.gpus_per_node == 0)
      throw UsageError("predict: --nics-per-node needs a cluster shape (--cluster NxG or --gpus-per-node G)");
    options.nics_per_node = count_option(vm, "nics-per-node");
  } else if (options.gpus_per_node > 0) {
    options.nics_per_node = options.gpus_per_node;
  }
}

// With a cluster shape every GPU count is laid out on it: whole nodes above one node, within its nodes when given.
void check_cluster_gpus(const PredictOptions& options) {
  if (options.gpus_per_node == 0) return;
  if (!options.link)
    throw UsageError(
        "predict: a cluster shape needs the NICs between its nodes: --link NAME, or --link-bandwidth "
        "GB/s and --link-latency us (per NIC)");
  for (const int n : options.gpus) {
    const predict::ClusterShape shape = predict::layout_of(n, options.gpus_per_node, options.nics_per_node);
    if (options.nodes > 0 && shape.nodes > options.nodes)
      throw UsageError("--gpus " + std::to_string(n) + ": more than the cluster's " + std::to_string(options.nodes) +
                       " x " + std::to_string(options.gpus_per_node) + " GPUs");
  }
}

// The GPU counts a cluster shape asks about unless --gpus says: 1 GPU, one node and the cluster (--nodes), or 1, 2
// and 4 nodes (only --gpus-per-node).
std::string default_cluster_gpus(const PredictOptions& options) {
  const int g = options.gpus_per_node;
  if (options.nodes > 0) {
    std::string list = "1";
    if (g > 1) list += "," + std::to_string(g);
    if (options.nodes > 1) list += "," + std::to_string(options.nodes * g);
    return list;
  }
  return (g > 1 ? "1," : "") + std::to_string(g) + "," + std::to_string(2 * g) + "," + std::to_string(4 * g);
}

}  // namespace

po::options_description predict_option_description() {
  po::options_description description(120);
  // clang-format off
  description.add_options()
    ("probe", po::value<std::string>()->value_name("FILE"), "/probe of mgpu_bench probe (required)")
    ("allreduce", po::value<std::vector<std::string>>()->value_name("FILE"),
     "/allreduce of mgpu_bench allreduce (repeatable; a 2-rank sweep also gives the link)");
  // clang-format on
  // The MLP, its batches and GPU counts and its precision: mgpu_bench's options, from their rows.
  with_option_row("model", [&](const auto& row) {
    describe_option(description, row, "the MLP, one preset: " + preset_list_text());
  });
  with_option_row("layers", [&](const auto& row) { describe_option(description, row); });
  with_option_row("batch",
                  [&](const auto& row) { describe_option(description, row, "global batches, comma-separated"); });
  with_option_row("gpus", [&](const auto& row) {
    describe_option(description, row,
                    "GPU counts, comma-separated (default 1,2,4; on a cluster 1,G,NxG, or 1,G,2G,4G without --nodes)");
  });
  with_option_row("precision", [&](const auto& row) {
    describe_option(description, row, "which of the probe's GEMM times: " + command_line_value_list<Precision>());
  });
  // clang-format off
  description.add_options()
    ("link", po::value<std::string>()->value_name("NAME"),
     "the link between GPUs (on a cluster, each NIC): ib100, ib200, ib400, ib800; or --link-bandwidth GB/s with "
     "--link-latency us")
    ("link-bandwidth", po::value<double>()->value_name("GB/s"), "the link's bandwidth (with --link-latency)")
    ("link-latency", po::value<double>()->value_name("us"), "the link's latency (with --link-bandwidth)")
    ("cluster", po::value<std::string>()->value_name("NxG"),
     "N nodes of G GPUs (docs/cluster.md; --gpus-per-node alone: the nodes each count needs)")
    ("nodes", po::value<std::string>()->value_name("N"), "the cluster's nodes (with --gpus-per-node)")
    ("gpus-per-node", po::value<std::string>()->value_name("G"), "GPUs per node of a cluster")
    ("nics-per-node", po::value<std::string>()->value_name("K"), "NICs per node (default: one per GPU)")
    ("published", po::value<std::vector<std::string>>()->value_name("FILE"),
     "the cluster all-reduce cost model against a published table, per size, and each table's error apart "
     "(repeatable); on a cluster, once one table is held out of the fit, the worst |error| of every row widens each "
     "speedup into its error band (docs/cluster.md)")
    ("check", po::value<std::string>()->value_name("RESULTS.h5"),
     "predict every configuration of that file from its settings alone and report predicted and measured step (and "
     "speedup where a 1-GPU baseline is there), with median and worst |error|; the worst speedup |error| widens "
     "each predicted speedup's error band too");
  // clang-format on
  describe_format_option(description, "how the tables are written");
  description.add_options()("out", po::value<std::string>()->default_value("")->value_name("DIR"),
                            "predicted_speedup.{dat,gp} there, and .png/.svg when gnuplot is on PATH");
  return description;
}

PredictOptions parse_predict_options(int argc, const char* const* argv, bool* help) {
  po::options_description described = predict_option_description();
  described.add_options()("help,h", "");
  po::variables_map vm;
  try {
    po::positional_options_description none;
    po::store(po::command_line_parser(argc, argv).options(described).positional(none).style(kExactOptions).run(),
              vm);  // skips argv[0]
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError("predict: " + option_error_message(e, described));
  }
  PredictOptions options;
  *help = vm.count("help") > 0;
  if (*help) return options;
  if (vm.count("published")) options.published_paths = vm["published"].as<std::vector<std::string>>();
  const bool predicts = vm.count("model") || vm.count("layers") || vm.count("batch") || vm.count("check");
  if (!options.published_paths.empty() && !predicts) {
    // The model against published tables alone: nothing else is read.
    for (const char* other : {"probe", "allreduce", "gpus", "cluster", "nodes", "gpus-per-node", "nics-per-node",
                              "link", "link-bandwidth", "link-latency", "precision", "out"})
      if (vm.count(other) && !vm[other].defaulted())
        throw UsageError(std::string("predict: --") + other + " has no effect with --published alone (each table " +
                         "states its cluster)");
    options.format = parse_format(vm["format"].as<std::string>());
    return options;
  }
  if (!vm.count("probe")) throw UsageError("predict: --probe FILE.h5 is required (the output of mgpu_bench probe)");
  options.probe_path = vm["probe"].as<std::string>();
  if (vm.count("allreduce")) options.allreduce_paths = vm["allreduce"].as<std::vector<std::string>>();
  if (vm.count("model") && vm.count("layers")) throw UsageError("predict: give --model or --layers, not both");
  if (vm.count("model")) {
    const std::vector<std::string> models = parse_model_list(vm["model"].as<std::string>());  // names an unknown one
    if (models.size() != 1) throw UsageError("predict: --model takes one preset, not several");
    options.model_name = models.front();
  }
  if (vm.count("layers")) options.layer_widths = parse_layer_widths(vm["layers"].as<std::string>());
  if (vm.count("check")) options.check_path = vm["check"].as<std::string>();
  const bool has_model = vm.count("model") || vm.count("layers");
  if (vm.count("batch")) {
    if (!has_model) throw UsageError("predict: --batch needs --model or --layers");
    for (const int batch : parse_number_list_option("batch", vm["batch"].as<std::string>()))
      options.batches.push_back(batch);
  } else if (has_model) {
    throw UsageError("predict: --batch B,... is required with --model or --layers");
  } else if (options.check_path.empty()) {
    throw UsageError("predict: give --model or --layers with --batch, or --check RESULTS.h5");
  }
  parse_cluster(vm, options);
  const std::string gpus = vm.count("gpus")            ? vm["gpus"].as<std::string>()
                           : options.gpus_per_node > 0 ? default_cluster_gpus(options)
                                                       : "1,2,4";
  options.gpus = parse_number_list_option("gpus", gpus);
  options.precision = parse_named<Precision>("precision", vm["precision"].as<std::string>());
  if (vm.count("link")) {
    if (vm.count("link-bandwidth") || vm.count("link-latency"))
      throw UsageError("predict: give --link NAME or --link-bandwidth and --link-latency, not both");
    options.link = predict::named_link(vm["link"].as<std::string>());
  } else if (vm.count("link-bandwidth") || vm.count("link-latency")) {
    if (!vm.count("link-bandwidth") || !vm.count("link-latency"))
      throw UsageError("predict: --link-bandwidth and --link-latency go together");
    predict::Link link;
    link.bandwidth_gbs = vm["link-bandwidth"].as<double>();
    link.latency_us = vm["link-latency"].as<double>();
    if (!(link.bandwidth_gbs > 0) || !std::isfinite(link.bandwidth_gbs))
      throw UsageError("--link-bandwidth " + shortest_double_text(link.bandwidth_gbs) + ": expected a positive GB/s");
    if (!(link.latency_us >= 0) || !std::isfinite(link.latency_us))
      throw UsageError("--link-latency " + shortest_double_text(link.latency_us) + ": expected a non-negative us");
    link.name = shortest_double_text(link.bandwidth_gbs) + " GB/s link";
    link.source = "stated on the command line";
    options.link = link;
  }
  check_cluster_gpus(options);
  options.format = parse_format(vm["format"].as<std::string>());
  options.out_dir = vm["out"].as<std::string>();
  return options;
}

}  // namespace mgpu::analysis
