// Purpose: a model of one data-parallel training step from measured rates (docs/model.md): per layer the step's own
// units as the probe timed them (a preset in fp32), or the GEMMs at their shapes with our elementwise kernels and
// Adam as bytes over the probe's copy bandwidth (never under its graph-node cost); and the gradient all-reduce
// (allreduce_model.hpp), exposed or overlapped as the step runs it, or the sharded optimizer's reduce-scatter and
// all-gather in its place (docs/measurement.md, "Step execution").
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/configuration.hpp"
#include "model/mlp_spec.hpp"
#include "results/results_schema.hpp"
#include "stats/allreduce_model.hpp"
#include "stats/cluster_allreduce.hpp"

namespace mgpu::stats {

// Where a term's value came from, from strongest to weakest.
enum class TermSource { measured, interpolated, extrapolated, estimated };
const char* term_source_name(TermSource source);

// The step's three GEMMs of a dense layer (src/train/cuda_mlp.cpp; the probe's labels end with these names).
enum class GemmKind { forward, weight_grad, input_grad };

// One probed GEMM: the layer it belongs to (fan_in, fan_out), the batch dimension and the median time.
struct MeasuredGemm {
  GemmKind kind = GemmKind::forward;
  int fan_in = 0, fan_out = 0;
  long long batch = 0;
  double ms = 0;
};

// One unit of the step's own work at one batch (the probe's step_labels: "<preset> b<batch> <unit>"), median ms.
struct MeasuredUnit {
  std::string model;  // the preset
  std::string unit;   // "L1 forward", "L1 input_grad", "L1 input_grad fused", "L1 weight_grad", "loss",
                      // "output_head", "adam", "fused_optimizer"
  long long batch = 0;
  double ms = 0;
};

// The rates of one GPU, medians over the probe's runs, at one GEMM precision.
struct ProbeRates {
  Precision precision = Precision::fp32;
  std::vector<MeasuredGemm> gemms;
  double peak_gemm_tflops = 0;                       // the square GEMM's: the rate for shapes never probed
  std::vector<std::pair<long long, double>> copies;  // bytes copied (read once, written once) -> ms, ascending
  double graph_node_ms = 0;                          // one kernel node of a graph: the floor of every kernel
  double graph_launch_ms = 0;                        // one cudaGraphLaunch: once per step
  std::vector<MeasuredUnit> units;                   // fp32 only; empty for an older probe
};

// From a stored probe; UsageError naming the precision when the probe did not time it, or when a label or a time
// cannot be read as the probe writes it.
ProbeRates probe_rates(const results_schema::HardwareProbe& probe, Precision precision);

// A time measured at some batches, at `batch`: capped, interpolated, clamped or extrapolated as gemm_ms says
// (`points`: batch -> ms, any order, at least one).
double interpolate_in_batch(std::vector<std::pair<long long, double>> points, long long batch, TermSource* source);

// One GEMM of layer (fan_in, fan_out) at `batch` rows. Each measured time is first capped by the times of the larger
// measured batches of the same layer and kind (a smaller product is never slower). They are then interpolated
// linearly in batch between the two measured neighbours; below the smallest measured batch the smallest's time
// (a skinny product costs its latency, not its FLOPs); above the largest, that time scaled by the batch ratio (the
// rate of the largest held). A layer never probed: 2 fan_in fan_out batch / the square GEMM's rate (estimated).
double gemm_ms(const ProbeRates& rates, GemmKind kind, int fan_in, int fan_out, long long batch, TermSource* source);

// A memory-bound kernel moving `bytes` (reads + writes): bytes / the copy bandwidth measured at that traffic
// (2 x copied bytes / time, linear in log bytes between probe sizes, held outside them), never under graph_node_ms.
double memory_pass_ms(const ProbeRates& rates, double bytes);

// The fused weight gradient + Adam (1 rank, fp32): one pass over the parameters that also computes each weight's
// gradient, so the slower of its traffic (p, m, v read and written: memory_pass_ms) and its weight-gradient FLOPs
// (2 x dense weights x batch) at the probe's square-GEMM rate; never the separate GEMMs' sum.
double fused_optimizer_ms(const ProbeRates& rates, double dense_weights, double parameters, long long batch);

// mgpu_bench's defaults on GPUs: the configuration the resolver (config/resolver.hpp) makes of the default request for
// `model` on this GPU count, global batch and precision. UsageError for ranks < 1, batch < 1 or a batch not divisible
// by ranks.
Configuration default_gpu_configuration(const MlpSpec& model, int ranks, long long global_batch, Precision precision);

// The bytes of one gradient element the all-reduce moves.
inline int gradient_bytes_per_element(GradDtype grad_dtype) { return grad_dtype == GradDtype::bf16 ? 2 : 4; }

// The predicted step and its phases (the results file's phases), with where the weakest of its terms came from.
struct StepPrediction {
  double forward_ms = 0, backward_ms = 0, allreduce_ms = 0, exposed_comm_ms = 0, optimizer_ms = 0, step_ms = 0;
  TermSource gemm_source = TermSource::measured;
  TermSource allreduce_source = TermSource::measured;  // measured: an all-reduce sweep at this rank count
};

class StepModel {
 public:
  // curves: measured all-reduce sweeps (any rank counts); link: for rank counts without a curve (or all rank counts
  // when given explicitly, override_curves); without one, a 2-rank curve's fitted link is used.
  StepModel(ProbeRates rates, std::vector<AllreduceCurve> curves, std::optional<Link> link, bool link_overrides_curves);

  // The step of a resolved configuration (its model, GPU count, global batch and step settings).
  StepPrediction predict(const Configuration& configuration) const;
  // The all-reduce of `bytes` on `ranks` ranks inside the step; UsageError when no curve and no link can answer.
  double allreduce_ms(long long bytes, int ranks, TermSource* source) const;
  // The link used for rank counts without a curve, if any.
  const std::optional<Link>& link() const { return link_; }
  // With a cluster (cluster_allreduce.hpp) the all-reduce of every GPU count is the sweep measured on its layout
  // where there is one, else the cluster model's; the link and the curves of other layouts no longer answer.
  void use_cluster(ClusterAllreduceModel cluster) { cluster_ = std::move(cluster); }
  // Every all-reduce the cluster model gives (never a measured sweep's) times `factor`: the ends of a prediction's
  // error band (docs/cluster.md, "The error band"). UsageError for a factor that is not positive and finite.
  void scale_modelled_allreduce(double factor);
  const std::optional<ClusterAllreduceModel>& cluster() const { return cluster_; }
  const ProbeRates& rates() const { return rates_; }
  // The preset whose step units the probe timed and whose widths `model` has ("" if none): its step is then composed
  // from them instead of from cuBLAS GEMMs and elementwise traffic.
  std::string probed_preset(const MlpSpec& model) const;

 private:
  // The all-reduce timed alone, as the sweep (or the link's alpha-beta model fitted to one) gives it.
  double alone_allreduce_ms(long long bytes, int ranks, TermSource* source) const;
  ProbeRates rates_;
  std::vector<AllreduceCurve> curves_;
  std::optional<Link> link_;
  bool link_overrides_curves_ = false;
  std::optional<ClusterAllreduceModel> cluster_;
  double modelled_allreduce_scale_ = 1.0;
};

}  // namespace mgpu::stats
