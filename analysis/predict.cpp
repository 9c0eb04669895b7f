// Purpose: the predict subcommand's grid, break-even, recommendation, check and output (predict.hpp).
#include "predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "platform/build_info.hpp"
#include "platform/error.hpp"
#include "platform/sample_median.hpp"
#include "plots.hpp"
#include "predict_band.hpp"
#include "predict_plot.hpp"
#include "published_table.hpp"
#include "stats/answer.hpp"
#include "stats/break_even.hpp"
#include "stats/configuration_stats.hpp"

namespace mgpu::analysis {
namespace {

Table prediction_table(const std::vector<PredictedConfiguration>& grid) {
  Table table{"prediction", "Predicted step (ms) per GPU count and global batch", {}, {}, {}, true};
  table.columns = {{"gpus", "GPUs"},
                   {"global_batch", "batch", 0, true},
                   {"forward_ms", "forward", 4},
                   {"backward_ms", "backward", 4},
                   {"allreduce_ms", "allreduce", 4},
                   {"exposed_comm_ms", "exposed", 4},
                   {"optimizer_ms", "optimizer", 4},
                   {"step_ms", "step", 4},
                   {"throughput", "samples/s", 0, true},
                   {"speedup", "speedup", 3},
                   {"speedup_low", "", 3, false, true, "[", ","},
                   {"speedup_high", "", 3, false, true, "", "]"},
                   {"ceiling", "ceiling", 3},
                   text_column("gemm_source", "GEMMs"),
                   text_column("allreduce_source", "all-reduce")};
  for (const PredictedConfiguration& p : grid)
    table.add_row({std::int64_t(p.gpus), std::int64_t(p.global_batch), p.step.forward_ms, p.step.backward_ms,
                   p.step.allreduce_ms, p.step.exposed_comm_ms, p.step.optimizer_ms, p.step.step_ms, p.throughput,
                   p.speedup, p.speedup_high > 0 ? Value(p.speedup_low) : Value(),
                   p.speedup_high > 0 ? Value(p.speedup_high) : Value(), p.ceiling > 0 ? Value(p.ceiling) : Value(),
                   std::string(stats::term_source_name(p.step.gemm_source)),
                   p.gpus > 1 ? Value(std::string(stats::term_source_name(p.step.allreduce_source))) : Value()});
  table.notes.push_back(
      "speedup = step(1 GPU) / step(N GPUs) at the same global batch, [its error band] where one is known "
      "(error_band); ceiling = step(1 GPU) / step(1 GPU at the local batch, global / N), the speedup if communication "
      "cost nothing; GEMMs and all-reduce: the weakest source of their terms (measured, interpolated, extrapolated, "
      "estimated); docs/model.md states the equations");
  return table;
}

MlpSpec model_of(const PredictOptions& options) {
  return options.model_name.empty() ? custom_model(options.layer_widths, 0.0) : preset_model(options.model_name);
}

// " over ib400" (the flat link model), " on 2 nodes of 8 over ib400" or " in one node" (a cluster), "" (measured).
std::string where_the_gpus_are(const stats::StepModel& model, int gpus, const PredictOptions& options) {
  if (!options.link) return "";
  if (!model.cluster()) return " over " + options.link->name;
  const stats::ClusterShape shape = model.cluster()->layout(gpus);
  if (shape.nodes == 1) return " in one node";
  return " on " + std::to_string(shape.nodes) + " nodes of " + std::to_string(shape.gpus_per_node) + " over " +
         options.link->name;
}

// Per GPU count above 1 on the cluster: its layout, the gradient's all-reduce timed alone and what gave it (the sweep
// measured on that layout, or the cluster model's candidate and the inside of a node it used).
Table cluster_table(const stats::StepModel& model, const MlpSpec& mlp, const PredictOptions& options) {
  const stats::ClusterAllreduceModel& cluster = *model.cluster();
  Table table{"cluster_allreduce", "The gradient's all-reduce per GPU count on the cluster", {}, {}, {}, true};
  table.columns = {{"gpus", "GPUs"},
                   text_column("layout", "layout"),
                   {"gradient_bytes", "bytes", 0, true},
                   {"allreduce_ms", "all-reduce", 4},
                   text_column("algorithm", "algorithm"),
                   text_column("protocol", "protocol"),
                   text_column("source", "from")};
  for (const int n : options.gpus) {
    if (n == 1) continue;
    const GradDtype grad_dtype = stats::default_gpu_configuration(mlp, n, n, options.precision).training.grad_dtype;
    const long long bytes = (long long)mlp.parameter_count() * stats::gradient_bytes_per_element(grad_dtype);
    const std::string layout = stats::shape_text(cluster.layout(n));
    if (const stats::AllreduceCurve* curve = cluster.measured_curve(n)) {
      table.add_row({std::int64_t(n), layout, std::int64_t(bytes), stats::interpolate_allreduce_ms(*curve, bytes),
                     Value(), Value(), std::string("measured: the sweep on this layout")});
      continue;
    }
    const stats::AllreduceCandidate c = cluster.estimate(bytes, n);
    table.add_row({std::int64_t(n), layout, std::int64_t(bytes), c.ms(bytes), std::string(algorithm_name(c.algorithm)),
                   std::string(protocol_name(c.protocol)),
                   "model; node " + cluster.node(cluster.layout(n).gpus_per_node).source});
  }
  table.notes.push_back("NIC: " + cluster.nic().name + ", " + cluster.nic().source);
  table.notes.push_back(
      "timed alone, as mgpu_bench allreduce times it; the step's reduction takes 1.06 x this (docs/model.md); the "
      "model: the fastest of ring and tree in LL, LL128 and Simple (docs/cluster.md); a sweep measured on a layout "
      "(mgpu_bench allreduce there, then --allreduce FILE) replaces the model for it");
  return table;
}

}  // namespace

Table check_table(const CheckSummary& summary) {
  Table table{"check", "Predicted against measured", {}, {}, {}, true};
  table.columns = {text_column("configuration", "configuration"),
                   {"gpus", "GPUs"},
                   {"global_batch", "batch", 0, true},
                   {"predicted_step_ms", "predicted step", 4},
                   {"measured_step_ms", "measured step", 4},
                   {"step_error_percent", "error %", 1},
                   {"predicted_speedup", "predicted speedup", 3},
                   {"measured_speedup", "measured speedup", 3},
                   {"speedup_error_percent", "error %", 1}};
  for (const CheckedConfiguration& c : summary.rows)
    table.add_row({c.name, std::int64_t(c.gpus), std::int64_t(c.global_batch), c.predicted_step_ms, c.measured_step_ms,
                   100 * c.step_error, c.has_speedup ? Value(c.predicted_speedup) : Value(),
                   c.has_speedup ? Value(c.measured_speedup) : Value(),
                   c.has_speedup ? Value(100 * c.speedup_error) : Value()});
  char line[256];
  std::snprintf(line, sizeof line, "step: median |error| %.1f%%, worst %.1f%% over %zu configurations",
                100 * summary.median_abs_step_error, 100 * summary.worst_abs_step_error, summary.rows.size());
  table.notes.push_back(line);
  if (summary.speedups > 0) {
    std::snprintf(line, sizeof line, "speedup: median |error| %.1f%%, worst %.1f%% over %d configurations",
                  100 * summary.median_abs_speedup_error, 100 * summary.worst_abs_speedup_error, summary.speedups);
    table.notes.push_back(line);
  }
  table.notes.push_back("error = (predicted - measured) / measured; measured = mean step over the kept runs");
  return table;
}

stats::StepModel build_step_model(const PredictOptions& options, Precision precision) {
  std::vector<stats::AllreduceCurve> curves;
  for (const std::string& path : options.allreduce_paths)
    curves.push_back(stats::allreduce_curve(read_allreduce_sweep(path)));
  const results_schema::HardwareProbe probe = read_hardware_probe(options.probe_path);
  stats::StepModel model(stats::probe_rates(probe, precision), curves, options.link,
                         options.link.has_value() && options.gpus_per_node == 0);
  if (options.gpus_per_node > 0) {
    const std::string gpu = probe.conditions.gpu_names.empty() ? "" : probe.conditions.gpu_names.front();
    model.use_cluster(
        stats::ClusterAllreduceModel(options.gpus_per_node, options.nics_per_node, *options.link, gpu, curves));
  }
  return model;
}

std::vector<PredictedConfiguration> predict_grid(const stats::StepModel& model, const MlpSpec& mlp,
                                                 const std::vector<long long>& batches, const std::vector<int>& gpus,
                                                 Precision precision) {
  std::vector<PredictedConfiguration> grid;
  for (const int n : gpus)
    for (const long long batch : batches) {
      const stats::StepPrediction one = model.predict(stats::default_gpu_configuration(mlp, 1, batch, precision));
      PredictedConfiguration p;
      p.gpus = n;
      p.global_batch = batch;
      p.step = model.predict(stats::default_gpu_configuration(mlp, n, batch, precision));
      p.throughput = batch / (p.step.step_ms * 1e-3);
      p.speedup = one.step_ms / p.step.step_ms;
      if (n > 1 && batch % n == 0)
        p.ceiling = one.step_ms / model.predict(stats::default_gpu_configuration(mlp, 1, batch / n, precision)).step_ms;
      grid.push_back(p);
    }
  return grid;
}

CheckSummary check_predictions(const PredictOptions& options, const ResultsFile& results) {
  std::map<Precision, stats::StepModel> models;  // one per precision in the file
  const auto model_for = [&](Precision precision) -> const stats::StepModel& {
    auto found = models.find(precision);
    if (found == models.end()) found = models.emplace(precision, build_step_model(options, precision)).first;
    return found->second;
  };
  std::vector<stats::ConfigurationStats> measured;
  std::map<const ConfigurationResults*, double> predicted_ms;
  for (const ConfigurationResults& c : results.configurations) {
    if (c.runs() == 0) continue;
    // The model is of mgpu_bench's CUDA step, one update per step: other code, the CPU fallback and gradient
    // accumulation are not what it predicts.
    const ConfigurationMetadata& m = c.metadata;
    if (m.device != "cuda" || m.implementation != results_schema::kImplementation ||
        m.training().accumulate_steps != 1) {
      std::fprintf(stderr,
                   "mgpu_analyze: note: --check: configuration '%s' (%s, %s, accumulate %d) is not an mgpu_bench CUDA "
                   "step of one update; left out\n",
                   m.name.c_str(), m.implementation.c_str(), m.device.c_str(), m.training().accumulate_steps);
      continue;
    }
    measured.push_back(stats::compute_configuration_stats(c, results.path, stats::AnalysisOptions{}));
    predicted_ms[&c] = model_for(m.training().precision).predict(m.configuration).step_ms;
  }
  if (measured.empty())
    throw UsageError("--check '" + results.path + "': no mgpu_bench CUDA configuration with a completed run");
  // The measured speedups are the answer's (over the trial means where measured in trials), one per pair, shown on
  // the row of the pair's first N-GPU trial.
  const stats::Answer answer = stats::compute_answer(measured);
  std::map<const ConfigurationResults*, const stats::ScalingPair*> pair_of;
  for (const stats::PairAnswer& a : answer.pairs) pair_of[a.pair.multi().results] = &a.pair;
  CheckSummary summary;
  std::vector<double> step_errors, speedup_errors;
  for (const stats::ConfigurationStats& m : measured) {
    const ConfigurationMetadata& meta = m.results->metadata;
    CheckedConfiguration row;
    row.name = meta.name;
    row.gpus = meta.ranks();
    row.global_batch = meta.global_batch();
    row.predicted_step_ms = predicted_ms.at(m.results);
    row.measured_step_ms = m.mean_step_ms;
    row.step_error = (row.predicted_step_ms - row.measured_step_ms) / row.measured_step_ms;
    step_errors.push_back(std::fabs(row.step_error));
    const auto pair = pair_of.find(m.results);
    if (pair != pair_of.end()) {
      row.has_speedup = true;
      row.predicted_speedup = predicted_ms.at(pair->second->single().results) / row.predicted_step_ms;
      row.measured_speedup = pair->second->speedup.ratio;
      row.speedup_error = (row.predicted_speedup - row.measured_speedup) / row.measured_speedup;
      speedup_errors.push_back(std::fabs(row.speedup_error));
    }
    summary.rows.push_back(row);
  }
  summary.median_abs_step_error = median(step_errors);
  summary.worst_abs_step_error = *std::max_element(step_errors.begin(), step_errors.end());
  summary.speedups = int(speedup_errors.size());
  if (!speedup_errors.empty()) {
    summary.median_abs_speedup_error = median(speedup_errors);
    summary.worst_abs_speedup_error = *std::max_element(speedup_errors.begin(), speedup_errors.end());
  }
  return summary;
}

int run_predict(const PredictOptions& options) {
  // Everything is read and validated before anything is written.
  std::optional<ResultsFile> check_file;
  if (!options.check_path.empty()) check_file = read_results_file(options.check_path);
  std::vector<stats::PublishedTable> published;
  for (const std::string& path : options.published_paths) published.push_back(read_published_table(path));
  std::optional<CheckSummary> check;
  if (check_file) check = check_predictions(options, *check_file);
  std::vector<Table> tables;
  std::vector<PredictedConfiguration> grid;
  std::string recommendation;
  std::vector<PredictedCurve> curves;
  if (!options.batches.empty()) {
    const stats::StepModel model = build_step_model(options, options.precision);
    const MlpSpec mlp = model_of(options);
    grid = predict_grid(model, mlp, options.batches, options.gpus, options.precision);
    const ErrorBand band =
        error_band_of(model.cluster().has_value(), published, options.check_path, check ? &*check : nullptr);
    add_error_band(grid, model, mlp, options.precision, band);
    tables.push_back(prediction_table(grid));
    if (model.cluster() || band.any()) tables.push_back(error_band_table(band, model.cluster().has_value()));
    if (model.cluster()) tables.push_back(cluster_table(model, mlp, options));
    Table break_even{"break_even", "Break-even global batch per GPU count (predicted)", {}, {}, {}, true};
    break_even.columns = {{"gpus", "GPUs"},
                          {"break_even_batch", "break-even batch", 0, true},
                          text_column("summary", "in short"),
                          text_column("description", "")};
    if (band.any())
      break_even.columns.insert(break_even.columns.begin() + 3, {text_column("summary_low", "at the band's low end"),
                                                                 text_column("summary_high", "at its high end")});
    for (const int n : options.gpus) {
      if (n == 1) continue;
      const std::string over = where_the_gpus_are(model, n, options);
      PredictedCurve curve{n, {}};
      std::vector<stats::SpeedupPoint> low, high;
      for (const PredictedConfiguration& p : grid)
        if (p.gpus == n) {
          curve.points.push_back({p.global_batch, p.speedup});
          low.push_back({p.global_batch, p.speedup_low});
          high.push_back({p.global_batch, p.speedup_high});
        }
      const stats::BreakEven found = stats::estimate_break_even(curve.points);
      const bool rises_once = found.crossings.size() == 1 && found.crossings.front().rising;
      const std::string summary = stats::break_even_summary(found);
      std::vector<Value> row = {std::int64_t(n), rises_once ? Value(found.crossings.front().batch) : Value(), summary};
      if (band.any())
        for (const auto* end : {&low, &high})
          row.push_back(stats::break_even_summary(stats::estimate_break_even(*end)));
      row.push_back(stats::describe_break_even(found));
      break_even.add_row(std::move(row));
      recommendation +=
          (recommendation.empty() ? "" : "; ") + std::to_string(n) + " GPUs" + over + ", break-even: " + summary;
      curves.push_back(curve);
    }
    if (!recommendation.empty()) {
      recommendation = "for " + (options.model_name.empty() ? mlp.widths_string() : options.model_name) +
                       " on this machine, " + recommendation;
      break_even.notes.push_back(recommendation);
      if (model.link() && !model.cluster()) {
        char line[512];
        std::snprintf(line, sizeof line, "alpha-beta all-reduce%s: link %s, %.1f GB/s, %.2f us (%s)",
                      options.link ? "" : " for GPU counts without a measured sweep", model.link()->name.c_str(),
                      model.link()->bandwidth_gbs, model.link()->latency_us, model.link()->source.c_str());
        break_even.notes.push_back(line);
      }
      tables.push_back(break_even);
    }
  }
  for (const stats::PublishedTable& table : published)
    tables.push_back(published_table(table, stats::hold_against(table)));
  if (!published.empty()) tables.push_back(published_error_table(published));
  std::vector<MeasuredSpeedup> measured_points;
  if (check) {
    for (const CheckedConfiguration& c : check->rows)
      if (c.has_speedup) measured_points.push_back({c.gpus, c.global_batch, c.measured_speedup});
    tables.push_back(check_table(*check));  // last: the validation table is what a check reads first
  }
  if (options.format == Format::json) {
    nlohmann::json json = {{"tool", "mgpu_analyze predict"},
                           {"version", project_version()},
                           {"probe", options.probe_path},
                           {"allreduce", options.allreduce_paths},
                           {"precision", setting_name(options.precision)},
                           {"recommendation", recommendation},
                           {"tables", tables_to_json(tables)}};
    std::fputs((json.dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(render_tables(tables, options.format).c_str(), stdout);
  }
  std::fflush(stdout);
  if (!options.out_dir.empty() && !curves.empty()) {
    const bool drawn = write_predicted_speedup_plot(options.out_dir, curves, measured_points);
    if (!drawn)
      std::fprintf(stderr,
                   "mgpu_analyze: note: gnuplot not found on PATH: the speedup plot is not drawn (its data and "
                   "script are in '%s')\n",
                   options.out_dir.c_str());
  }
  return 0;
}

}  // namespace mgpu::analysis
