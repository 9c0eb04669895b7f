// Purpose: `mgpu_analyze predict`: predicted step, phases, throughput and speedup per model, batch and GPU count from
// a hardware probe and all-reduce sweeps (src/stats/step_model.hpp), the break-even batch per GPU count, a one-line
// recommendation, a speedup plot, and `--check`: the model against every configuration of a measured results file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "stats/step_model.hpp"
#include "table.hpp"

namespace mgpu::analysis {

struct PredictOptions {
  std::string probe_path;
  std::vector<std::string> allreduce_paths;
  std::string model_name;          // a preset, or "" with layer_widths
  std::vector<int> layer_widths;   // --layers
  std::vector<long long> batches;  // global batches
  std::vector<int> gpus;
  Precision precision = Precision::fp32;
  std::optional<stats::Link> link;  // --link or --link-bandwidth/--link-latency: used for every rank count above 1,
                                    // or with a cluster shape per NIC between its nodes
  // A cluster shape (docs/cluster.md): GPUs per node (0: none, the flat link model), its nodes (0: as many as each GPU
  // count needs) and NICs per node (one per GPU unless given).
  int gpus_per_node = 0, nodes = 0, nics_per_node = 0;
  std::vector<std::string> published_paths;  // --published TABLE.json: the cluster model against a published table
  std::string check_path;                    // --check RESULTS.h5
  Format format = Format::terminal;
  std::string out_dir;  // plot (and the output) go there when given
};

// The model the options describe: the probe at their precision, the sweeps, the link.
stats::StepModel build_step_model(const PredictOptions& options, Precision precision);

// One predicted configuration.
struct PredictedConfiguration {
  int gpus = 0;
  long long global_batch = 0;
  stats::StepPrediction step;
  double throughput = 0;  // samples/s
  double speedup = 0;     // step(1 GPU) / step(N GPUs) at the same global batch
  // The speedup's ceiling (docs/statistics.md, "The ceiling"): step(1 GPU, B) / step(1 GPU, B / N), what N GPUs would
  // reach if communication cost nothing; 0 for one GPU or a batch N does not divide.
  double ceiling = 0;
  // The speedup's error band (docs/cluster.md, "The error band"); both 0 where no error is known.
  double speedup_low = 0, speedup_high = 0;
};
std::vector<PredictedConfiguration> predict_grid(const stats::StepModel& model, const MlpSpec& mlp,
                                                 const std::vector<long long>& batches, const std::vector<int>& gpus,
                                                 Precision precision);

// One configuration of a results file against its prediction (its timings are not used to predict).
struct CheckedConfiguration {
  std::string name;
  int gpus = 0;
  long long global_batch = 0;
  double predicted_step_ms = 0, measured_step_ms = 0;
  double step_error = 0;     // (predicted - measured) / measured
  bool has_speedup = false;  // the first N-GPU trial of an answer pair (stats/answer.hpp): its speedup is the pair's
  double predicted_speedup = 0, measured_speedup = 0, speedup_error = 0;
};
struct CheckSummary {
  std::vector<CheckedConfiguration> rows;
  double median_abs_step_error = 0, worst_abs_step_error = 0;
  int speedups = 0;
  double median_abs_speedup_error = 0, worst_abs_speedup_error = 0;
};
CheckSummary check_predictions(const PredictOptions& options, const ResultsFile& results);
// The check as a table: each configuration's predicted and measured step and speedup, their errors, and the summary.
Table check_table(const CheckSummary& summary);

// The whole subcommand: prints the tables (and writes the plot into out_dir); returns the exit status.
int run_predict(const PredictOptions& options);

}  // namespace mgpu::analysis
