// Purpose: the hardware probe: every measurement a CUDA graph of `iterations` identical operations, replayed between
// two events (launch gaps removed: what the hardware sustains), median over runs on the console, every run in /probe.
#include "probes/hardware_probe.hpp"

#include <algorithm>
#include <cstdio>

#include "platform/error.hpp"
#include "results/results_reader.hpp"
#include "results/results_writer.hpp"

#if MGPU_HAVE_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <functional>

#include "kernels/probe_kernels.cuh"
#include "model/mlp_spec.hpp"
#include "model/step_flops.hpp"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/gpu_devices.hpp"
#include "platform/sample_median.hpp"
#include "probes/graph_timing.hpp"
#include "probes/standalone_conditions.hpp"
#include "study/backend.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gemm/tuned_gemm.hpp"
#include "train/trainer.hpp"
#endif

namespace mgpu {

#if MGPU_HAVE_CUDA
namespace {

constexpr int kLaunchCount = 1000;                  // empty kernels per timed launch measurement
constexpr std::size_t kCopyPoolBytes = 2ull << 30;  // each of source and destination: several times the L2

struct GemmShape {
  std::string label;
  cublasOperation_t op_a, op_b;
  int m, n, k;
  double flops() const { return 2.0 * m * n * k; }
};

// The training step's GEMMs for one model and per-GPU batch (model/step_flops.hpp, the shapes every FLOP figure
// counts), as cuBLAS calls.
std::vector<GemmShape> step_gemm_shapes(const std::string& model, int batch) {
  std::vector<GemmShape> shapes;
  for (const StepGemm& gemm : step_gemms(preset_model(model), batch)) {
    const bool forward = gemm.kind == StepGemm::Kind::forward;
    const bool weight_grad = gemm.kind == StepGemm::Kind::weight_grad;
    shapes.push_back({model + " b" + std::to_string(batch) + " L" + std::to_string(gemm.layer) + " " +
                          step_gemm_kind_name(gemm.kind),
                      forward ? CUBLAS_OP_T : CUBLAS_OP_N, weight_grad ? CUBLAS_OP_T : CUBLAS_OP_N, int(gemm.m),
                      int(gemm.n), int(gemm.k)});
  }
  return shapes;
}

// fp32: true fp32; tf32: fp32 data on the tensor cores' TF32 path; bf16: bf16 data, fp32 accumulation (the
// training step's types for each, compute_type_for and operand_type_for).
const Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::bf16};

class Probe {
 public:
  explicit Probe(const ProbeOptions& options) : options_(options), cublas_(stream_.get()), workspace_(64u << 20) {
    // A workspace of our own: cuBLAS must not allocate while a graph is being captured.
    MGPU_CUBLAS_CHECK(cublasSetWorkspace(cublas_.get(), workspace_.data(), workspace_.bytes()));
  }

  // Milliseconds per operation of each run (graph_timing.hpp).
  std::vector<double> time_graph(int count, const std::function<void(int)>& enqueue) {
    return time_graph_replays(stream_.get(), count, options_.runs, enqueue);
  }

  void copies(HardwareProbe& probe) {
    const std::vector<std::pair<std::int64_t, std::string>> sizes = {
        {1ll << 20, "1 MiB"},
        {std::int64_t(preset_model("medium").parameter_count()) * 4, "medium parameters (fp32)"},
        {16ll << 20, "16 MiB"},
        {std::int64_t(preset_model("large").parameter_count()) * 4, "large parameters (fp32)"},
        {64ll << 20, "64 MiB"},
        {256ll << 20, "256 MiB"},
        {1ll << 30, "1 GiB"}};
    DeviceBuffer<unsigned char> source(kCopyPoolBytes), destination(kCopyPoolBytes);
    MGPU_CUDA_CHECK(cudaMemsetAsync(source.data(), 0x5A, source.bytes(), stream_.get()));
    probe.copy_bytes.shape = {sizes.size()};
    probe.copy_ms.shape = {std::size_t(options_.runs), sizes.size()};
    probe.copy_ms.values.assign(probe.copy_ms.shape[0] * sizes.size(), 0.0);
    std::printf(
        "# device-to-device copy (graph of %d cudaMemcpyAsync over rotating %.0f GiB buffers): bandwidth = "
        "2 x bytes / time (read + write)\n#  %14s %12s %10s  %s\n",
        options_.iterations, kCopyPoolBytes / double(1 << 30), "bytes", "time(us)", "GB/s", "");
    for (std::size_t c = 0; c < sizes.size(); ++c) {
      const std::size_t bytes = std::size_t(sizes[c].first);
      // Each copy of the graph touches other memory, so repeated copies do not run from the L2.
      const std::size_t slots = std::max<std::size_t>(1, kCopyPoolBytes / ((bytes + 255) / 256 * 256));
      const std::vector<double> ms = time_graph(options_.iterations, [&](int i) {
        const std::size_t offset = (std::size_t(i) % slots) * ((bytes + 255) / 256 * 256);
        MGPU_CUDA_CHECK(cudaMemcpyAsync(destination.data() + offset, source.data() + offset, bytes,
                                        cudaMemcpyDeviceToDevice, stream_.get()));
      });
      probe.copy_labels.push_back(sizes[c].second);
      probe.copy_bytes.values.push_back(std::int64_t(bytes));
      for (int run = 0; run < options_.runs; ++run) probe.copy_ms.values[run * sizes.size() + c] = ms[run];
      const double t = median(ms);
      std::printf("   %14zu %12.2f %10.1f  %s\n", bytes, t * 1e3, 2.0 * bytes / (t * 1e-3) / 1e9,
                  sizes[c].second.c_str());
    }
  }

  void gemms(HardwareProbe& probe) {
    std::vector<GemmShape> shapes;
    for (const std::string& model : options_.models)
      for (int batch : options_.batches)
        for (const GemmShape& shape : step_gemm_shapes(model, batch)) shapes.push_back(shape);
    const int s = options_.square;
    shapes.push_back({"square " + std::to_string(s), CUBLAS_OP_N, CUBLAS_OP_N, s, s, s});
    std::size_t a_max = 0, b_max = 0, c_max = 0;
    for (const GemmShape& g : shapes) {
      a_max = std::max(a_max, std::size_t(g.m) * g.k);
      b_max = std::max(b_max, std::size_t(g.k) * g.n);
      c_max = std::max(c_max, std::size_t(g.m) * g.n);
    }
    // Random operands in both formats (never zeros: METHOD.md); C is overwritten (beta = 0).
    DeviceBuffer<float> a32(a_max), b32(b_max), c32(c_max);
    DeviceBuffer<std::uint16_t> a16(a_max), b16(b_max), c16(c_max);
    probe_kernels::fill_random(a32.data(), a_max, 1, stream_.get());
    probe_kernels::fill_random(b32.data(), b_max, 2, stream_.get());
    probe_kernels::fill_random_bf16(a16.data(), a_max, 1, stream_.get());
    probe_kernels::fill_random_bf16(b16.data(), b_max, 2, stream_.get());

    const std::size_t precisions = std::size(kPrecisions);
    probe.gemm_shape.shape = {shapes.size(), 3};
    for (const GemmShape& g : shapes) {
      probe.gemm_labels.push_back(g.label);
      probe.gemm_shape.values.insert(probe.gemm_shape.values.end(), {g.m, g.n, g.k});
    }
    probe.gemm_ms.shape = {std::size_t(options_.runs), precisions, shapes.size()};
    probe.gemm_ms.values.assign(probe.gemm_ms.shape[0] * precisions * shapes.size(), 0.0);
    std::vector<std::vector<double>> median_ms(precisions, std::vector<double>(shapes.size()));
    for (std::size_t p = 0; p < precisions; ++p) {
      const Precision precision = kPrecisions[p];
      probe.gemm_precisions.push_back(setting_name(precision));
      const cudaDataType_t type = operand_type_for(precision);
      const cublasComputeType_t compute = compute_type_for(precision);
      const bool bf16 = type == CUDA_R_16BF;
      const void* a = bf16 ? static_cast<const void*>(a16.data()) : a32.data();
      const void* b = bf16 ? static_cast<const void*>(b16.data()) : b32.data();
      void* c = bf16 ? static_cast<void*>(c16.data()) : c32.data();
      for (std::size_t g = 0; g < shapes.size(); ++g) {
        const GemmShape& shape = shapes[g];
        const int lda = shape.op_a == CUBLAS_OP_T ? shape.k : shape.m;
        const int ldb = shape.op_b == CUBLAS_OP_N ? shape.k : shape.n;
        const float one = 1.0f, zero = 0.0f;
        const std::vector<double> ms = time_graph(options_.iterations, [&](int) {
          MGPU_CUBLAS_CHECK(cublasGemmEx(cublas_.get(), shape.op_a, shape.op_b, shape.m, shape.n, shape.k, &one, a,
                                         type, lda, b, type, ldb, &zero, c, type, shape.m, compute,
                                         CUBLAS_GEMM_DEFAULT));
        });
        for (int run = 0; run < options_.runs; ++run)
          probe.gemm_ms.values[(std::size_t(run) * precisions + p) * shapes.size() + g] = ms[run];
        median_ms[p][g] = median(ms);
      }
    }
    // Console: the peak GEMM, then per model and batch the sum over the step's GEMMs.
    std::printf(
        "#\n# cuBLAS GEMM (graph of %d; fp32 = COMPUTE_32F, tf32 = COMPUTE_32F_FAST_TF32, bf16 = bf16 data "
        "with fp32 accumulation)\n",
        options_.iterations);
    std::printf("#  %-24s", "GEMMs");
    for (const Precision precision : kPrecisions) std::printf(" %9s_us %7s", setting_name(precision), "TFLOP/s");
    std::printf("\n");
    std::size_t first = 0;
    while (first < shapes.size()) {
      const std::string group = shapes[first].label.substr(0, shapes[first].label.rfind(" L"));
      std::size_t last = first;
      double flops = 0;
      while (last < shapes.size() && shapes[last].label.substr(0, shapes[last].label.rfind(" L")) == group)
        flops += shapes[last++].flops();
      // A model's GEMMs are summed per batch: the matrix work of one training step on one GPU.
      std::printf("   %-24s", (group.rfind("square", 0) == 0 ? group : group + " step").c_str());
      for (std::size_t p = 0; p < precisions; ++p) {
        double ms = 0;
        for (std::size_t g = first; g < last; ++g) ms += median_ms[p][g];
        std::printf(" %12.2f %7.1f", ms * 1e3, flops / (ms * 1e-3) / 1e12);
      }
      std::printf("\n");
      first = last;
    }
  }

  // The step's own work, unit by unit, for each model and batch (fp32, CudaMlp: what the step enqueues): each
  // layer's forward, input gradient (with the bias gradient, and the fused optimizer's form without it) and weight
  // gradient, the loss, the output head where it serves, Adam and the fused optimizer. Why, beside the cuBLAS GEMMs
  // above: the step runs each shape on its tuned choice, which at small batches folds the elementwise pass into the
  // product, so a model built from cuBLAS's default and separate elementwise kernels counts kernels the step never
  // launches (docs/model.md).
  void step_units(HardwareProbe& probe) {
    std::vector<std::vector<double>> per_unit;
    const AdamSettings adam;
    DeviceBuffer<float> losses(8);
    std::printf(
        "#\n# the step's own units (graph of %d; fp32, tuned as the step tunes them), us: forward (all layers + "
        "loss), backward (input + weight gradients), Adam; with the fused optimizer: backward (input gradients), "
        "fused optimizer\n#  %-14s %10s %10s %10s %10s %10s\n",
        options_.iterations, "", "forward", "backward", "adam", "backward", "fused opt");
    for (const std::string& model : options_.models)
      for (int batch : options_.batches) {
        CudaMlp mlp(preset_model(model), batch, stream_.get());
        const int layers = int(mlp.model().layers().size());
        mlp.initialize(1, 0);
        mlp.advance_step(batch, 0, adam);
        mlp.generate_batch();
        const std::string prefix = model + " b" + std::to_string(batch) + " ";
        // Each unit with the console column it adds to (kNoColumn: the head, which replaces three others).
        enum Column { kForward, kBackward, kAdam, kBackwardFused, kFusedOptimizer, kColumns, kNoColumn = kColumns };
        struct Unit {
          std::string name;
          Column column;
          std::function<void()> enqueue;
        };
        std::vector<Unit> units;
        const auto layer_unit = [&](int l, const char* what, Column column, std::function<void()> enqueue) {
          units.push_back({"L" + std::to_string(l) + " " + what, column, std::move(enqueue)});
        };
        for (int l = 0; l < layers; ++l)
          layer_unit(l, "forward", kForward, [&mlp, l] { mlp.forward_layer(std::size_t(l)); });
        units.push_back({"loss", kForward, [&] { mlp.loss_and_gradient(loss_slots(losses)); }});
        if (mlp.output_head_fusable())
          units.push_back({"output_head", kNoColumn, [&] { mlp.output_head(loss_slots(losses)); }});
        for (int l = layers - 1; l >= 1; --l) {
          layer_unit(l, "input_grad", kBackward, [&mlp, l] { mlp.input_gradient(l, false); });
          layer_unit(l, "input_grad fused", kBackwardFused, [&mlp, l] { mlp.input_gradient(l, true); });
        }
        for (int l = 0; l < layers; ++l) layer_unit(l, "weight_grad", kBackward, [&mlp, l] { mlp.weight_gradient(l); });
        units.push_back({"adam", kAdam, [&] { mlp.adam(adam); }});
        units.push_back({"fused_optimizer", kFusedOptimizer, [&] { mlp.adam_with_weight_gradients(adam); }});
        // Each unit once outside any capture first: every GEMM shape is tuned then (TunedGemm), as the step's eager
        // warm-up does before its capture.
        for (const Unit& unit : units) unit.enqueue();
        MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
        double us[kColumns + 1] = {};
        for (const Unit& unit : units) {
          probe.step_labels.push_back(prefix + unit.name);
          per_unit.push_back(time_graph(options_.iterations, [&](int) { unit.enqueue(); }));
          us[unit.column] += median(per_unit.back()) * 1e3;
        }
        std::printf("   %-14s %10.2f %10.2f %10.2f %10.2f %10.2f\n", (model + " b" + std::to_string(batch)).c_str(),
                    us[kForward], us[kBackward], us[kAdam], us[kBackwardFused], us[kFusedOptimizer]);
      }
    probe.step_ms.shape = {std::size_t(options_.runs), per_unit.size()};
    for (int run = 0; run < options_.runs; ++run)
      for (const std::vector<double>& ms : per_unit) probe.step_ms.values.push_back(ms[run]);
  }

  void launches(HardwareProbe& probe) {
    probe.launch_labels = {"kernel_launch", "graph_node", "graph_launch"};
    std::vector<std::vector<double>> per_run(3);
    // Back-to-back stream launches: the host's launch rate, when the kernels are shorter than a launch.
    for (int run = 0; run < options_.runs + 1; ++run) {
      start_.record(stream_.get());
      for (int i = 0; i < kLaunchCount; ++i) probe_kernels::empty(stream_.get());
      end_.record(stream_.get());
      end_.synchronize();
      if (run > 0) per_run[0].push_back(elapsed_ms(start_, end_) / kLaunchCount);  // run 0 warms up
    }
    // One graph of many kernel nodes: what each node of a whole-step graph costs.
    per_run[1] = time_graph(kLaunchCount, [&](int) { probe_kernels::empty(stream_.get()); });
    // A one-node graph launched back-to-back: the fixed cost of a graph launch.
    CudaGraph single;
    single.capture(stream_.get(), [&] { probe_kernels::empty(stream_.get()); });
    for (int run = 0; run < options_.runs + 1; ++run) {
      start_.record(stream_.get());
      for (int i = 0; i < kLaunchCount; ++i) single.launch(stream_.get());
      end_.record(stream_.get());
      end_.synchronize();
      if (run > 0) per_run[2].push_back(elapsed_ms(start_, end_) / kLaunchCount);
    }
    probe.launch_ms.shape = {std::size_t(options_.runs), 3};
    for (int run = 0; run < options_.runs; ++run)
      for (int l = 0; l < 3; ++l) probe.launch_ms.values.push_back(per_run[l][run]);
    std::printf(
        "#\n# empty kernel (%d per measurement): kernel_launch %.2f us, graph_node %.2f us, graph_launch "
        "%.2f us\n",
        kLaunchCount, median(per_run[0]) * 1e3, median(per_run[1]) * 1e3, median(per_run[2]) * 1e3);
  }

 private:
  ProbeOptions options_;
  CudaStream stream_;
  CublasHandle cublas_;
  DeviceBuffer<unsigned char> workspace_;
  CudaEvent start_, end_;
};

}  // namespace
#endif

void run_hardware_probe(const ProbeOptions& options, const MpiContext& mpi) {
  if (mpi.size != 1)
    throw UsageError("probe measures one GPU from one process: run it without mpirun (or -np 1), not on " +
                     std::to_string(mpi.size) + " ranks");
#if MGPU_HAVE_CUDA
  if (visible_cuda_device_count() == 0)
    throw UsageError("probe measures a GPU, and this process sees none (no CUDA driver or device)");
  check_can_add_group(options.output_path, results_schema::kProbeGroup, options.force);
  const BackendChoice choice{Backend::cuda, 0, ""};
  MGPU_CUDA_CHECK(cudaSetDevice(choice.device_ordinal));
  HardwareProbe probe;
  probe.conditions = describe_standalone_conditions(choice, mpi, options.command_line);
  probe.conditions.started_utc = utc_timestamp_now();
  probe.iterations = options.iterations;
  probe.runs = options.runs;
  print_standalone_banner(stdout, "probe", probe.conditions, options.output_path);
  std::printf("# %d runs of each measurement; console: median over runs\n", options.runs);
  {
    Probe measure(options);
    measure.copies(probe);
    measure.gemms(probe);
    measure.step_units(probe);
    measure.launches(probe);
  }
  write_hardware_probe(options.output_path, probe, options.force);
  std::printf("#\n# results: /%s in %s\n", results_schema::kProbeGroup, options.output_path.c_str());
#else
  (void)options;
  throw UsageError("probe measures a GPU, and this build has no CUDA support (no nvcc at configure time)");
#endif
}

}  // namespace mgpu
