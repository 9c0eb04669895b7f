// Purpose: the step model's terms and their sum (step_model.hpp; the equations are docs/model.md's).
#include "stats/step_model.hpp"

#include <algorithm>
#include <cmath>

#include "config/resolver.hpp"
#include "platform/error.hpp"
#include "platform/sample_median.hpp"

namespace mgpu::stats {
namespace {

constexpr double kFloatBytes = 4;
// Bytes per element of each elementwise kernel of the step (src/kernels/cuda_kernels.cu), reads + writes in floats:
// bias + ReLU + dropout reads Z and writes A; its backward reads dA and A (the mask) and writes dZ; the loss reads y
// and the target and writes dL/dy.
constexpr double kActivationFloats = 2, kActivationBackwardFloats = 3, kLossFloats = 3;
// Adam per parameter: reads p, g, m, v and writes p, m, v; fused with the weight gradient, g is never in memory (the
// activations it reads instead are batch x width, small beside the parameters at the batches where it is used).
constexpr double kAdamFloats = 7, kFusedAdamFloats = 6;
// tf32x3 (train/tf32x3_operands.hpp): every GEMM is three TF32 products of its shape (the two small terms as one over
// twice the K where the layout allows), and each kernel that writes a GEMM operand also writes its split, two floats
// per value.
constexpr double kTf32x3Products = 3, kSplitFloats = 2;
// With overlap the first (layerwise) or last (deferred) bucket closes at 1 MB: what is left to reduce after backward.
constexpr double kSmallBucketBytes = 1e6;

TermSource weaker(TermSource a, TermSource b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

// The per-run medians of one slice of a [runs, ...] array: value(run) for every run.
template <typename Value>
double run_median(std::size_t runs, Value value) {
  std::vector<double> per_run(runs);
  for (std::size_t run = 0; run < runs; ++run) per_run[run] = value(run);
  return median(per_run);
}

void check_positive_time(double ms, const std::string& what) {
  if (!(ms > 0) || !std::isfinite(ms))
    throw UsageError("probe: time of " + what + " is " + std::to_string(ms) + " ms, not a positive number");
}

}  // namespace

const char* term_source_name(TermSource source) {
  switch (source) {
    case TermSource::measured:
      return "measured";
    case TermSource::interpolated:
      return "interpolated";
    case TermSource::extrapolated:
      return "extrapolated";
    case TermSource::estimated:
      return "estimated";
  }
  return "?";
}

ProbeRates probe_rates(const results_schema::HardwareProbe& probe, Precision precision) {
  if (precision == Precision::tf32x3) {  // the probe's tf32 GEMMs, three of each
    ProbeRates rates = probe_rates(probe, Precision::tf32);
    rates.precision = precision;
    for (MeasuredGemm& gemm : rates.gemms) gemm.ms *= kTf32x3Products;
    rates.peak_gemm_tflops /= kTf32x3Products;
    return rates;
  }
  ProbeRates rates;
  rates.precision = precision;
  const std::string name = setting_name(precision);
  const auto p = std::find(probe.gemm_precisions.begin(), probe.gemm_precisions.end(), name);
  if (p == probe.gemm_precisions.end())
    throw UsageError("precision '" + name + "': the probe did not time GEMMs in it");
  const std::size_t precision_index = std::size_t(p - probe.gemm_precisions.begin());
  const std::size_t runs = probe.gemm_ms.shape.at(0);
  for (std::size_t g = 0; g < probe.gemm_labels.size(); ++g) {
    const std::string& label = probe.gemm_labels[g];
    const double ms = run_median(runs, [&](std::size_t run) { return probe.gemm_ms.at(run, precision_index, g); });
    check_positive_time(ms, "GEMM '" + label + "'");
    const long long m = probe.gemm_shape.at(g, 0), n = probe.gemm_shape.at(g, 1), k = probe.gemm_shape.at(g, 2);
    const std::string kind = label.substr(label.rfind(' ') + 1);
    // The probe's column-major view of each GEMM (hardware_probe.cpp): forward (out, B, in), weight gradient
    // (in, out, B), input gradient (in, B, out).
    if (kind == "forward")
      rates.gemms.push_back({GemmKind::forward, int(k), int(m), n, ms});
    else if (kind == "weight_grad")
      rates.gemms.push_back({GemmKind::weight_grad, int(m), int(n), k, ms});
    else if (kind == "input_grad")
      rates.gemms.push_back({GemmKind::input_grad, int(m), int(k), n, ms});
    else if (label.rfind("square", 0) == 0)
      rates.peak_gemm_tflops = 2.0 * m * n * k / (ms * 1e-3) / 1e12;
  }
  for (std::size_t c = 0; c < probe.copy_bytes.values.size(); ++c) {
    const double ms = run_median(probe.copy_ms.shape.at(0), [&](std::size_t run) { return probe.copy_ms.at(run, c); });
    check_positive_time(ms, "copy of " + std::to_string(probe.copy_bytes.values[c]) + " bytes");
    rates.copies.emplace_back(probe.copy_bytes.values[c], ms);
  }
  std::sort(rates.copies.begin(), rates.copies.end());
  if (rates.copies.empty()) throw UsageError("probe: no copy measured");
  for (std::size_t l = 0; l < probe.launch_labels.size(); ++l) {
    const double ms =
        run_median(probe.launch_ms.shape.at(0), [&](std::size_t run) { return probe.launch_ms.at(run, l); });
    if (probe.launch_labels[l] == "graph_node") rates.graph_node_ms = ms;
    if (probe.launch_labels[l] == "graph_launch") rates.graph_launch_ms = ms;
  }
  // The step's own units are fp32 (the step's other precisions run other GEMMs and write bf16 copies).
  if (precision == Precision::fp32 && !probe.step_labels.empty()) {
    for (std::size_t u = 0; u < probe.step_labels.size(); ++u) {
      const std::string& label = probe.step_labels[u];
      const std::size_t model_end = label.find(" b"), batch_end = label.find(' ', model_end + 2);
      long long batch = 0;
      try {
        batch = model_end == std::string::npos || batch_end == std::string::npos
                    ? 0
                    : std::stoll(label.substr(model_end + 2, batch_end - model_end - 2));
      } catch (const std::exception&) {
        batch = 0;
      }
      if (batch < 1) throw UsageError("probe: step label '" + label + "' is not '<model> b<batch> <unit>'");
      const double ms =
          run_median(probe.step_ms.shape.at(0), [&](std::size_t run) { return probe.step_ms.at(run, u); });
      check_positive_time(ms, "step unit '" + label + "'");
      rates.units.push_back({label.substr(0, model_end), label.substr(batch_end + 1), batch, ms});
    }
  }
  check_positive_time(rates.graph_node_ms, "a graph node");
  check_positive_time(rates.graph_launch_ms, "a graph launch");
  return rates;
}

double gemm_ms(const ProbeRates& rates, GemmKind kind, int fan_in, int fan_out, long long batch, TermSource* source) {
  if (batch < 1) throw UsageError("GEMM model: batch " + std::to_string(batch) + ": expected at least 1");
  std::vector<std::pair<long long, double>> points;  // batch -> ms for this layer and kind
  for (const MeasuredGemm& g : rates.gemms)
    if (g.kind == kind && g.fan_in == fan_in && g.fan_out == fan_out) points.emplace_back(g.batch, g.ms);
  if (points.empty()) {
    if (!(rates.peak_gemm_tflops > 0))
      throw UsageError("GEMM model: layer " + std::to_string(fan_in) + "x" + std::to_string(fan_out) +
                       " was not probed and the probe has no square GEMM rate");
    *source = TermSource::estimated;
    return 2.0 * fan_in * fan_out * batch / (rates.peak_gemm_tflops * 1e12) * 1e3;
  }
  return interpolate_in_batch(std::move(points), batch, source);
}

double interpolate_in_batch(std::vector<std::pair<long long, double>> points, long long batch, TermSource* source) {
  MGPU_REQUIRE(!points.empty() && batch >= 1, "interpolate_in_batch: no measured point, or batch < 1");
  std::sort(points.begin(), points.end());
  // Work over fewer rows never needs longer than over more (for a GEMM the step's tuner would run it as well as the
  // larger one; the probe times cuBLAS's heuristic choice, which at small batches is sometimes far off): each time
  // is capped by every larger batch's.
  for (std::size_t i = points.size(); i-- > 1;) points[i - 1].second = std::min(points[i - 1].second, points[i].second);
  if (batch <= points.front().first) {
    *source = batch == points.front().first ? TermSource::measured : TermSource::extrapolated;
    return points.front().second;
  }
  if (batch >= points.back().first) {
    *source = batch == points.back().first ? TermSource::measured : TermSource::extrapolated;
    return points.back().second * double(batch) / double(points.back().first);
  }
  const auto above = std::lower_bound(points.begin(), points.end(), std::make_pair(batch, 0.0));
  if (above->first == batch) {
    *source = TermSource::measured;
    return above->second;
  }
  const auto below = above - 1;
  *source = TermSource::interpolated;
  const double fraction = double(batch - below->first) / double(above->first - below->first);
  return below->second + fraction * (above->second - below->second);
}

double memory_pass_ms(const ProbeRates& rates, double bytes) {
  // Copy bandwidth as the probe defines it (2 x copied bytes / time), at the copy whose traffic is nearest in log.
  const auto bandwidth_at = [&](std::size_t i) { return 2.0 * rates.copies[i].first / rates.copies[i].second; };
  const double copied = bytes / 2;
  double bytes_per_ms;
  if (copied <= rates.copies.front().first) {
    bytes_per_ms = bandwidth_at(0);
  } else if (copied >= rates.copies.back().first) {
    bytes_per_ms = bandwidth_at(rates.copies.size() - 1);
  } else {
    std::size_t i = 1;
    while (rates.copies[i].first < copied) ++i;
    const double fraction = std::log(copied / rates.copies[i - 1].first) /
                            std::log(double(rates.copies[i].first) / rates.copies[i - 1].first);
    bytes_per_ms = bandwidth_at(i - 1) + fraction * (bandwidth_at(i) - bandwidth_at(i - 1));
  }
  return std::max(bytes / bytes_per_ms, rates.graph_node_ms);
}

double fused_optimizer_ms(const ProbeRates& rates, double dense_weights, double parameters, long long batch) {
  const double traffic_ms = memory_pass_ms(rates, kFusedAdamFloats * kFloatBytes * parameters);
  const double compute_ms =
      rates.peak_gemm_tflops > 0 ? 2.0 * dense_weights * batch / (rates.peak_gemm_tflops * 1e12) * 1e3 : 0.0;
  return std::max(traffic_ms, compute_ms);
}

Configuration default_gpu_configuration(const MlpSpec& model, int ranks, long long global_batch, Precision precision) {
  if (ranks < 1) throw UsageError("--gpus " + std::to_string(ranks) + ": expected at least 1");
  if (global_batch < 1) throw UsageError("--batch " + std::to_string(global_batch) + ": expected at least 1");
  if (global_batch % ranks != 0)
    throw UsageError("--batch " + std::to_string(global_batch) + ": not divisible by " + std::to_string(ranks) +
                     " GPUs (the global batch is split evenly)");
  StepRequest request;
  request.precision = precision;
  Configuration configuration;
  configuration.gpus = ranks;
  configuration.training.model = model;
  configuration.training.global_batch = static_cast<int>(global_batch);
  resolve_step(request, true, ranks, configuration.training);
  return configuration;
}

StepModel::StepModel(ProbeRates rates, std::vector<AllreduceCurve> curves, std::optional<Link> link,
                     bool link_overrides_curves)
    : rates_(std::move(rates)),
      curves_(std::move(curves)),
      link_(std::move(link)),
      link_overrides_curves_(link_overrides_curves) {
  if (!link_)
    for (const AllreduceCurve& curve : curves_)
      if (curve.ranks == 2) link_ = link_from_sweep(curve);
}

// A reduction inside the step takes longer than the sweep's, which times it alone between its own events: the
// step's reduction of the whole gradient took 1.03-1.10 x the sweep's time for its bytes (large, batch 8 to 4096, 2
// and 4 x H200; docs/model.md).
constexpr double kInStepAllreduceSlowdown = 1.06;

double StepModel::allreduce_ms(long long bytes, int ranks, TermSource* source) const {
  *source = TermSource::measured;
  if (ranks == 1) return 0;
  return kInStepAllreduceSlowdown * alone_allreduce_ms(bytes, ranks, source);
}

namespace {

// A measured curve at `bytes`, and whether the size was measured, lies between measured sizes or outside them.
double curve_ms(const AllreduceCurve& curve, long long bytes, TermSource* source) {
  const bool inside = bytes >= curve.bytes_ms.front().first && bytes <= curve.bytes_ms.back().first;
  *source = inside ? TermSource::interpolated : TermSource::extrapolated;
  for (const auto& point : curve.bytes_ms)
    if (point.first == bytes) *source = TermSource::measured;
  return interpolate_allreduce_ms(curve, bytes);
}

}  // namespace

double StepModel::alone_allreduce_ms(long long bytes, int ranks, TermSource* source) const {
  *source = TermSource::measured;
  if (cluster_) {
    if (const AllreduceCurve* measured = cluster_->measured_curve(ranks)) return curve_ms(*measured, bytes, source);
    *source = TermSource::estimated;
    return modelled_allreduce_scale_ * cluster_->estimate(bytes, ranks).ms(bytes);
  }
  if (!link_overrides_curves_)
    for (const AllreduceCurve& curve : curves_)
      if (curve.ranks == ranks) return curve_ms(curve, bytes, source);
  if (!link_)
    throw UsageError("no all-reduce sweep on " + std::to_string(ranks) +
                     " ranks and no link to model one: give --allreduce with a 2-rank sweep, --link or "
                     "--link-bandwidth and --link-latency");
  *source = TermSource::estimated;
  return alpha_beta_allreduce_ms(bytes, ranks, *link_);
}

void StepModel::scale_modelled_allreduce(double factor) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw UsageError("step model: all-reduce scale " + std::to_string(factor) + ": expected a positive number");
  modelled_allreduce_scale_ = factor;
}

std::string StepModel::probed_preset(const MlpSpec& model) const {
  const std::vector<std::string> presets = preset_names();
  for (const MeasuredUnit& u : rates_.units)
    if (std::find(presets.begin(), presets.end(), u.model) != presets.end() &&
        preset_model(u.model).widths == model.widths)
      return u.model;
  return "";
}

namespace {

// The share of a hidden reduction's time that backward grows by (see predict). Fitted to the deferred step's phases
// against the step without overlap on 2 and 4 x H200 (large, local batch 256 to 2048: 0.7 to 1.1; docs/model.md).
constexpr double kOverlapContention = 0.85;

// Each collective of the sharded optimizer (the reduce-scatter of the gradient, the all-gather of the parameters) as a
// share of the all-reduce of the same bytes, which no sweep times apart. A ring all-reduce is the two, so half would
// be the floor; in the step each took 0.61-0.65 of the all-reduce (large 1024 on 4 x H200 and 2 x H100; docs/model.md).
constexpr double kShardedCollectiveShare = 0.65;

// A step's compute: forward, backward without the weight gradients, the weight gradients, Adam, and how they were
// obtained (the weakest source of any term).
struct ComputeTerms {
  double forward_ms = 0, backward_ms = 0, weight_gradients_ms = 0, adam_ms = 0;
  TermSource source = TermSource::measured;
};

// The step's own units of a probed preset, measured at the exact shapes (or interpolated in batch), composed as the
// step runs them.
ComputeTerms compose_units(const ProbeRates& rates, const std::string& preset, const MlpSpec& model,
                           const TrainingSettings& settings, long long batch) {
  ComputeTerms terms;
  const auto unit = [&](const std::string& name) {
    std::vector<std::pair<long long, double>> points;
    for (const MeasuredUnit& u : rates.units)
      if (u.model == preset && u.unit == name) points.emplace_back(u.batch, u.ms);
    if (points.empty()) throw UsageError("probe: no step unit '" + preset + " " + name + "'");
    TermSource term = TermSource::measured;
    // Adam's work is the parameters', whatever the batch: outside the probed batches it keeps the nearest's time.
    long long at = batch;
    if (name == "adam") {
      const auto [lowest, highest] = std::minmax_element(points.begin(), points.end());
      at = std::clamp(batch, lowest->first, highest->first);
    }
    const double ms = interpolate_in_batch(std::move(points), at, &term);
    terms.source = weaker(terms.source, term);
    return ms;
  };
  // The head serves every batch up to the largest at which the probe found it could (output_head_supported).
  long long head_up_to = 0;
  for (const MeasuredUnit& u : rates.units)
    if (u.model == preset && u.unit == "output_head") head_up_to = std::max(head_up_to, u.batch);
  const bool head = settings.fused_optimizer && batch <= head_up_to;
  const int layers = static_cast<int>(model.layers().size());
  const std::string last = "L" + std::to_string(layers - 1);
  for (int l = 0; l + 1 < layers; ++l) terms.forward_ms += unit("L" + std::to_string(l) + " forward");
  terms.forward_ms += head ? unit("output_head") : unit(last + " forward") + unit("loss");
  for (int l = head ? layers - 2 : layers - 1; l >= 1; --l)
    terms.backward_ms +=
        unit("L" + std::to_string(l) + (settings.fused_optimizer ? " input_grad fused" : " input_grad"));
  if (!settings.fused_optimizer)
    for (int l = 0; l < layers; ++l) terms.weight_gradients_ms += unit("L" + std::to_string(l) + " weight_grad");
  terms.adam_ms = unit(settings.fused_optimizer ? "fused_optimizer" : "adam");
  return terms;
}

// Any other model: cuBLAS GEMMs at the probed rates and the elementwise kernels' memory traffic.
ComputeTerms compose_gemms(const ProbeRates& rates, const MlpSpec& model, const TrainingSettings& settings,
                           long long batch) {
  ComputeTerms terms;
  const auto gemm = [&](GemmKind kind, const DenseLayer& layer) {
    TermSource term = TermSource::measured;
    const double ms = gemm_ms(rates, kind, layer.fan_in, layer.fan_out, batch, &term);
    terms.source = weaker(terms.source, term);
    return ms;
  };
  const auto floats_pass = [&](double floats) { return memory_pass_ms(rates, floats * kFloatBytes); };
  const double split = rates.precision == Precision::tf32x3 ? kSplitFloats : 0;  // per value written
  const std::vector<DenseLayer> layers = model.layers();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const DenseLayer& layer = layers[l];
    const double outputs = double(batch) * layer.fan_out;
    terms.forward_ms += gemm(GemmKind::forward, layer) +
                        floats_pass(((layer.hidden ? kActivationFloats : kLossFloats) + split) * outputs);
    if (l > 0) terms.backward_ms += gemm(GemmKind::input_grad, layer);
    if (layer.hidden) terms.backward_ms += floats_pass((kActivationBackwardFloats + split) * outputs);
    terms.weight_gradients_ms += gemm(GemmKind::weight_grad, layer);
  }
  const double parameters = double(model.parameter_count());
  terms.adam_ms = settings.fused_optimizer
                      ? fused_optimizer_ms(rates, double(model.dense_weight_count()), parameters, batch)
                      : floats_pass((kAdamFloats + split) * parameters);
  return terms;
}

}  // namespace

StepPrediction StepModel::predict(const Configuration& configuration) const {
  const TrainingSettings& settings = configuration.training;
  const MlpSpec& model = settings.model;
  const int ranks = configuration.gpus;
  if (ranks < 1 || settings.global_batch < ranks || settings.global_batch % ranks != 0)
    throw UsageError("step model: global batch " + std::to_string(settings.global_batch) + " on " +
                     std::to_string(ranks) + " ranks: expected a multiple of the rank count");
  const long long batch = settings.global_batch / ranks;
  const int bytes_per_element = gradient_bytes_per_element(settings.grad_dtype);
  const std::string preset = probed_preset(model);
  const ComputeTerms terms = preset.empty() ? compose_gemms(rates_, model, settings, batch)
                                            : compose_units(rates_, preset, model, settings, batch);
  StepPrediction step;
  step.forward_ms = terms.forward_ms;
  step.backward_ms = terms.backward_ms + (settings.fused_optimizer ? 0 : terms.weight_gradients_ms);
  step.optimizer_ms = terms.adam_ms;
  step.gemm_source = terms.source;

  const long long gradient_bytes = (long long)double(model.parameter_count()) * bytes_per_element;
  double optimizer_exposed_ms = step.optimizer_ms;
  if (ranks == 1) {
    step.allreduce_ms = step.exposed_comm_ms = 0;
  } else if (settings.optimizer_sharding) {
    // After backward: the reduce-scatter, then Adam on this rank's 1/N and the rest no rank owns (the parameters
    // beyond N equal shards, all-reduced instead), then the all-gather of the parameters, all on the step's path.
    const long long parameters = model.parameter_count();
    const long long shard = parameters / ranks, tail = parameters - shard * ranks;
    const double collective_ms = kShardedCollectiveShare * allreduce_ms(gradient_bytes, ranks, &step.allreduce_source);
    step.allreduce_source = TermSource::estimated;
    TermSource tail_source = TermSource::measured;
    const double tail_ms = tail > 0 ? allreduce_ms(tail * bytes_per_element, ranks, &tail_source) : 0.0;
    step.allreduce_ms = step.exposed_comm_ms = collective_ms + tail_ms;
    const double adam_share_ms = terms.adam_ms * double(shard + tail) / double(parameters);
    step.optimizer_ms = std::max(adam_share_ms, rates_.graph_node_ms) + collective_ms;
    optimizer_exposed_ms = step.optimizer_ms;
  } else if (!settings.overlap) {
    step.allreduce_ms = allreduce_ms(gradient_bytes, ranks, &step.allreduce_source);
    step.exposed_comm_ms = step.allreduce_ms;
  } else {
    // Buckets of the cap reduced while the weight-gradient GEMMs run; what backward cannot hide, and at least the
    // 1 MB bucket reduced after its end, is exposed; Adam runs per bucket as they arrive, so only the last bucket's
    // update follows the last reduction. What is hidden is not free: NCCL's kernels take SMs and memory bandwidth
    // from the GEMMs beside them, and backward grows by kOverlapContention of the reduction it hides.
    const double cap_bytes = settings.bucket_mb > 0 ? settings.bucket_mb * 1e6 : double(gradient_bytes);
    const long long buckets = std::max(1LL, (long long)std::ceil(gradient_bytes / cap_bytes));
    const long long bucket_bytes = (gradient_bytes + buckets - 1) / buckets;
    const long long last_bytes = std::min<long long>(bucket_bytes, (long long)kSmallBucketBytes);
    TermSource last_source = TermSource::measured;
    step.allreduce_ms = buckets * allreduce_ms(bucket_bytes, ranks, &step.allreduce_source);
    const double last_ms = allreduce_ms(last_bytes, ranks, &last_source);
    step.allreduce_source = weaker(step.allreduce_source, last_source);
    step.exposed_comm_ms = std::max(last_ms, step.allreduce_ms - terms.weight_gradients_ms);
    step.backward_ms += kOverlapContention * std::max(0.0, step.allreduce_ms - step.exposed_comm_ms);
    // --overlap-update after-last: the whole update follows the last reduction.
    if (settings.overlap_update != OverlapUpdate::after_last)
      optimizer_exposed_ms = terms.adam_ms * double(last_bytes) / double(gradient_bytes);
  }
  step.step_ms = step.forward_ms + step.backward_ms + step.exposed_comm_ms + optimizer_exposed_ms +
                 (settings.graph ? rates_.graph_launch_ms : 0);
  return step;
}

}  // namespace mgpu::stats
