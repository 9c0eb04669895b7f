// Purpose: TunedGemm: cuBLASLt descriptors per GEMM shape and the fastest of cuBLASLt's candidate algorithms and
// (fp32, few columns) our split-K kernel's configurations, timed once with CUDA events on the caller's buffers. The
// choice is shared by every TunedGemm of the process (same device, shape, alignment and compute type), so two models
// of the same shapes compute bit-identical products.
#include "train/gemm/tuned_gemm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/probe_kernels.cuh"
#include "kernels/reference_gemm.cuh"
#include "kernels/skinny_gemm.cuh"
#include "platform/cuda_check.hpp"
#include "platform/cuda_resources.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/wall_clock.hpp"
#include "train/gemm/candidate_ranking.hpp"
#include "train/gemm/cublaslt_candidates.hpp"
#include "train/gemm/gemm_verification.hpp"
#include "train/gemm/tuning_store.hpp"
#include "train/gpu_clocks.hpp"
#include "train/math_check.hpp"
#include "train/trainer.hpp"

namespace mgpu {
namespace {

constexpr int kCandidates = 16;  // cuBLASLt's best guesses, in its order
constexpr int kTimedCalls = 10;  // per candidate, after one untimed call
// The candidates within kRetimeWithin x the fastest's first time are timed kRetimeRounds more times, in turn, and keep
// their lowest: which candidates are ties (TunedGemm::kTiesWithin) then rests on more than one timing each.
constexpr double kRetimeWithin = 1.10;
constexpr int kRetimeRounds = 2;
// The fixed work the timed calls queue behind (tune()) doubles at most this many times, from about 0.2 ms.
constexpr int kMostFillerDoublings = 6;
// Each guess is also tried with its K dimension split in this many parts (partial products reduced in a second
// pass, in a fixed order): a skinny product such as 1024 x 32 x 4800 otherwise fills only a few of the 132 SMs.
constexpr int kSplits[] = {2, 4, 8, 16, 32};
constexpr int kMinimumSplitDepth = 32;  // no split leaves fewer than this many K values per part
// Our kernel's workspace: room for 16 parts of a 1024 x 64 product four times over (large's widest at any batch our
// kernel takes), and its tile counters. Shapes that need more are left to the configurations without it.
constexpr std::size_t kSkinnyPartialFloats = std::size_t{4} << 20;
constexpr std::size_t kSkinnyTileCounters = 4096;

}  // namespace

namespace {

// The tunings of TunedGemms given none: the process's (tests, the probe).
GemmTunings& process_gemm_tunings() {
  static GemmTunings tunings;
  return tunings;
}

}  // namespace

struct TunedGemm::Candidate {
  Choice choice;
  std::string name;
  int family = 0;  // the kind of kernel (rank_candidates): 0 for cuBLASLt's, our kernel's splits for ours
};

namespace {

// A shape's name in reports and plans (gemm_plan.hpp), from its key (TunedGemm::Key): the key's every part.
std::string shape_label(const std::tuple<int, int, int, int, int, int, int, int, int, int>& key) {
  const auto [op_a, op_b, m, n, k, lda, ldb, ldc, alignment, sm_count_target] = key;
  return gemm_shape_label(op_a != CUBLAS_OP_N, op_b != CUBLAS_OP_N, m, n, k, lda, ldb, ldc, alignment) +
         (sm_count_target > 0 ? " for " + std::to_string(sm_count_target) + " SMs" : "");
}

}  // namespace

struct TunedGemm::Plan {
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ChoiceKey choice_key;
  ShapeTuning tuning;
  const Choice& choice() const { return tuning.choices.at(tuning.selected); }
  ~Plan() {
    if (c != nullptr) MGPU_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(c));
    if (b != nullptr) MGPU_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(b));
    if (a != nullptr) MGPU_CUBLAS_WARN(cublasLtMatrixLayoutDestroy(a));
    if (operation != nullptr) MGPU_CUBLAS_WARN(cublasLtMatmulDescDestroy(operation));
  }
};

TunedGemm::Key TunedGemm::Operands::key(int sm_count_target) const {
  const int alignment = std::min({alignment_of(a), alignment_of(b), alignment_of(c)});
  return Key{int(op_a), int(op_b), m, n, k, lda, ldb, ldc, alignment, sm_count_target};
}

TunedGemm::TunedGemm(cudaStream_t stream, cublasComputeType_t compute, cudaDataType_t operands, void* workspace,
                     std::size_t workspace_bytes, GemmSelection selection, GemmTunings* tunings)
    : store_(&(tunings != nullptr ? *tunings : process_gemm_tunings()).store()),
      stream_(stream),
      compute_(compute),
      operands_(operands),
      workspace_(workspace),
      workspace_bytes_(workspace_bytes),
      selection_(selection),
      check_every_call_(every_call_is_checked()),
      corrupt_outputs_(selection == GemmSelection::tuned && gemm_corruption_requested()),
      skinny_workspace_(kSkinnyPartialFloats, kSkinnyTileCounters, stream) {
  MGPU_REQUIRE(operands == CUDA_R_32F || (operands == CUDA_R_16BF && compute == CUBLAS_COMPUTE_32F),
               "TunedGemm: operands must be fp32, or bf16 with CUBLAS_COMPUTE_32F");
  MGPU_CUBLAS_CHECK(cublasLtCreate(&handle_));
  int device = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  // cuBLASLt's split-K kernels on Hopper store their partial sums in the workspace with tensor-memory stores that
  // compute-sanitizer's initcheck does not see, and its reduction kernel then reads them: zeroed once, the workspace
  // is written as far as initcheck can tell (a wrong partial sum still fails verification).
  if (workspace_bytes_ > 0) MGPU_CUDA_CHECK(cudaMemsetAsync(workspace_, 0, workspace_bytes_, stream_));
}

TunedGemm::~TunedGemm() {
  plans_.clear();
  if (handle_ != nullptr) MGPU_CUBLAS_WARN(cublasLtDestroy(handle_));
}

bool TunedGemm::multiply(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const void* a, int lda,
                         const void* b, int ldb, float* c, int ldc, bool accumulate, bool a_is_stable,
                         const kernels::SkinnyEpilogue* epilogue) {
  MGPU_REQUIRE(epilogue == nullptr || !accumulate, "TunedGemm: an epilogue cannot be combined with accumulation");
  const Operands product{op_a, op_b, m, n, k, a, lda, b, ldb, c, ldc};
  const Key key = product.key(sm_count_target_);
  const Plan& plan = plan_for(key, product, accumulate);
  const Choice& choice = plan.choice();
  bool folded = false;
  if (choice.skinny) {
    MGPU_CUDA_CHECK(kernels::skinny_gemm(
        op_a != CUBLAS_OP_N, m, n, k, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb, c, ldc,
        accumulate, choice.skinny_config, stream_, a_is_stable,
        epilogue != nullptr ? *epilogue : kernels::SkinnyEpilogue{}, skinny_workspace_.view()));
    folded = epilogue != nullptr;
  } else {
    const float one = 1.0f;
    // beta = 0: C is overwritten, never read (so NaN-poisoned outputs stay a valid test); 1: gradient accumulation.
    const float beta = accumulate ? 1.0f : 0.0f;
    MGPU_CUBLAS_CHECK(cublasLtMatmul(handle_, plan.operation, &one, a, plan.a, b, plan.b, &beta, c, plan.c, c, plan.c,
                                     &choice.algo, workspace_, workspace_bytes_, stream_));
  }
  if (corrupt_outputs_) MGPU_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(float) * static_cast<std::size_t>(m), stream_));
  if (!accumulate && check_every_call_) {
    check_call(stream_, shape_label(key), plan.tuning.names.at(plan.tuning.selected), op_a != CUBLAS_OP_N,
               op_b != CUBLAS_OP_N, m, n, k, a, lda, b, ldb, operands_ == CUDA_R_16BF, c, ldc,
               verification_bound(compute_, k), folded ? epilogue : nullptr);
  }
  return folded;
}

std::vector<TunedGemm::ShapeOptions> TunedGemm::shape_options() const {
  std::vector<ShapeOptions> shapes;
  for (const auto& [key, plan] : plans_) {
    ShapeOptions shape;
    shape.shape = shape_label(key);
    shape.options = plan->tuning.names;
    shape.alone_us = plan->tuning.alone_us;
    shape.selected = plan->tuning.selected;
    shape.checked = plan->tuning.checked;
    shape.rejected = plan->tuning.rejected;
    shape.verification_seconds = plan->tuning.verification_seconds;
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

void TunedGemm::set_sm_count_target(int sms) {
  MGPU_REQUIRE(sms >= 0 && sms <= sms_, "SM count target " + std::to_string(sms) + " outside 0.." +
                                            std::to_string(sms_) + " (the device's multiprocessors)");
  sm_count_target_ = sms;
}

void TunedGemm::select(std::size_t shape, int option) {
  MGPU_REQUIRE(shape < plans_.size(),
               "TunedGemm::select: shape " + std::to_string(shape) + " of " + std::to_string(plans_.size()));
  Plan& plan = *std::next(plans_.begin(), static_cast<std::ptrdiff_t>(shape))->second;
  MGPU_REQUIRE(
      option >= 0 && option < static_cast<int>(plan.tuning.choices.size()),
      "TunedGemm::select: option " + std::to_string(option) + " of " + std::to_string(plan.tuning.choices.size()));
  plan.tuning.selected = option;
  std::lock_guard<std::mutex> lock(store_->mutex);
  store_->tunings[plan.choice_key].selected = option;
}

TunedGemm::Plan& TunedGemm::plan_for(const Key& key, const Operands& product, bool keep_output) {
  const auto found = plans_.find(key);
  if (found != plans_.end()) return *found->second;
  std::unique_ptr<Plan> plan = describe_shape(key);
  if (selection_ == GemmSelection::tuned) {
    std::lock_guard<std::mutex> lock(store_->mutex);
    const auto tuned = store_->tunings.find(plan->choice_key);
    if (tuned != store_->tunings.end()) {
      plan->tuning = tuned->second;
      return *plans_.emplace(key, std::move(plan)).first->second;
    }
  }
  // Tuning synchronises the stream, which a capture forbids: every shape must have been seen once before.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MGPU_CUDA_CHECK(cudaStreamIsCapturing(stream_, &capture));
  MGPU_REQUIRE(capture == cudaStreamCaptureStatusNone, "a GEMM shape was first seen while capturing a CUDA graph");
  const std::vector<cublasLtMatmulAlgo_t> heuristic = heuristic_algorithms(*plan, std::get<8>(key));
  if (selection_ == GemmSelection::library_default) {
    MGPU_REQUIRE(!heuristic.empty(), "cuBLASLt offers no algorithm within the workspace for a " +
                                         std::to_string(product.m) + "x" + std::to_string(product.n) + "x" +
                                         std::to_string(product.k) + " GEMM of the reference step");
    plan->tuning.choices.push_back(Choice{heuristic.front()});
    plan->tuning.alone_us.push_back(0.0);
    plan->tuning.names.push_back(describe_algo(heuristic.front()) + ", the library's first choice");
    return *plans_.emplace(key, std::move(plan)).first->second;
  }
  // Tuning writes the product's buffer; a call that adds to it (beta 1: tf32x3's second part) must find it as it was.
  DeviceBuffer<float> kept(keep_output ? std::size_t(product.m) * product.n : 0);
  const auto copy_output = [&](float* to, std::size_t to_pitch, const float* from, std::size_t from_pitch) {
    MGPU_CUDA_CHECK(cudaMemcpy2DAsync(to, to_pitch * sizeof(float), from, from_pitch * sizeof(float),
                                      sizeof(float) * std::size_t(product.m), std::size_t(product.n),
                                      cudaMemcpyDeviceToDevice, stream_));
  };
  if (keep_output) copy_output(kept.data(), product.m, product.c, product.ldc);
  if (followed_plan_.empty()) {
    tune(*plan, product, heuristic);
  } else {
    adopt_planned(*plan, product, heuristic);
  }
  if (keep_output) copy_output(product.c, product.ldc, kept.data(), product.m);
  if (keep_output) MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before `kept` is freed
  {
    std::lock_guard<std::mutex> lock(store_->mutex);
    store_->tunings.emplace(plan->choice_key, plan->tuning);
  }
  return *plans_.emplace(key, std::move(plan)).first->second;
}

std::unique_ptr<TunedGemm::Plan> TunedGemm::describe_shape(const Key& key) const {
  const auto [op_a, op_b, m, n, k, lda, ldb, ldc, alignment, sm_count_target] = key;
  auto plan = std::make_unique<Plan>();
  const auto ta = static_cast<cublasOperation_t>(op_a);
  const auto tb = static_cast<cublasOperation_t>(op_b);
  MGPU_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->operation, compute_, CUDA_R_32F));
  MGPU_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  MGPU_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->operation, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  // Layouts of A and B as stored (before the op), C as written; column-major.
  const bool a_transposed = ta != CUBLAS_OP_N;
  const bool b_transposed = tb != CUBLAS_OP_N;
  MGPU_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, operands_, a_transposed ? k : m, a_transposed ? m : k, lda));
  MGPU_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, operands_, b_transposed ? n : k, b_transposed ? k : n, ldb));
  MGPU_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32F, m, n, ldc));
  int device = 0;
  MGPU_CUDA_CHECK(cudaGetDevice(&device));
  // cuBLASLt chooses its kernels and sizes their grids for the target's SMs.
  const std::int32_t target = sm_count_target;
  if (target > 0)
    MGPU_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(plan->operation, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target, sizeof target));
  plan->choice_key = std::make_tuple(device, int(compute_), int(operands_), key);
  return plan;
}

std::vector<cublasLtMatmulAlgo_t> TunedGemm::heuristic_algorithms(const Plan& plan, int alignment) const {
  return heuristic_candidates(handle_, plan.operation, plan.a, plan.b, plan.c, alignment, workspace_bytes_,
                              kCandidates);
}

std::vector<TunedGemm::Candidate> TunedGemm::candidates_for(const Plan& plan, const Operands& product,
                                                            const std::vector<cublasLtMatmulAlgo_t>& heuristic) {
  // The listing order is the preference among ties (candidate_ranking.hpp): cuBLASLt's own ranking, each guess
  // followed by its split variants (fewest parts first), then our kernel's configurations.
  std::vector<Candidate> candidates;
  for (const cublasLtMatmulAlgo_t& algo : heuristic) {
    candidates.push_back({Choice{algo}, describe_algo(algo), 0});
    for (int splits : kSplits) {
      cublasLtMatmulAlgo_t variant{};
      if (product.k / splits >= kMinimumSplitDepth &&
          split_variant(handle_, plan.operation, plan.a, plan.b, plan.c, algo, splits, workspace_bytes_, variant))
        candidates.push_back({Choice{variant}, describe_algo(variant), 0});
    }
  }
  // Our split-K kernel, for fp32 products whose B (the activations) has few columns.
  const bool skinny_eligible = compute_ == CUBLAS_COMPUTE_32F && operands_ == CUDA_R_32F && product.op_b == CUBLAS_OP_N;
  if (!skinny_eligible) return candidates;
  for (const kernels::SkinnyGemmConfig& config :
       kernels::skinny_gemm_configs(product.m, product.n, product.k, skinny_workspace_.view()))
    candidates.push_back({Choice{{}, true, config}, "skinny (" + kernels::describe(config) + ")", config.splits});
  return candidates;
}

bool TunedGemm::run_candidate(const Plan& plan, const Choice& choice, const Operands& product) {
  if (choice.skinny) {
    const bool launched =
        kernels::skinny_gemm(product.op_a != CUBLAS_OP_N, product.m, product.n, product.k,
                             static_cast<const float*>(product.a), product.lda, static_cast<const float*>(product.b),
                             product.ldb, product.c, product.ldc, false, choice.skinny_config, stream_,
                             /*a_is_stable=*/true, {}, skinny_workspace_.view()) == cudaSuccess;
    if (!launched) (void)cudaGetLastError();  // a refused launch must not linger as the runtime's last error
    return launched;
  }
  const float one = 1.0f;
  const float zero = 0.0f;
  return cublasLtMatmul(handle_, plan.operation, &one, product.a, plan.a, product.b, plan.b, &zero, product.c, plan.c,
                        product.c, plan.c, &choice.algo, workspace_, workspace_bytes_,
                        stream_) == CUBLAS_STATUS_SUCCESS;
}

double TunedGemm::time_on_gpu(const Plan& plan, const Candidate& candidate, const Operands& product) {
  // The product is first filled with NaN, so that what verification reads afterwards is this candidate's alone: an
  // element it leaves unwritten fails the comparison instead of passing with an earlier candidate's value. (The fill
  // also keeps compute-sanitizer's initcheck from reporting the comparison's reads of products written by cuBLASLt's
  // Hopper kernels, whose tensor-memory stores it does not see.)
  MGPU_CUDA_CHECK(cudaMemset2DAsync(product.c, sizeof(float) * static_cast<std::size_t>(product.ldc), 0xFF,
                                    sizeof(float) * static_cast<std::size_t>(product.m), product.n, stream_));
  const bool launches = !unwritten_by_fault_hook(candidate.name);
  const auto run = [&] { return !launches || run_candidate(plan, candidate.choice, product); };
  // The GPU's time, not the host's: a small product takes less time on the GPU than its call on the host, so the
  // calls are queued behind fixed work long enough that the host has enqueued them all before the first starts; where
  // it had not (the start event had completed by then), the fixed work doubles and the timing is repeated. Timed at
  // the host's pace, one small shape's fastest candidate differed by 50% between processes on one H200.
  if (!run()) return std::numeric_limits<double>::infinity();  // untimed: kernel load
  for (int doubled = 0;; ++doubled) {
    probe_kernels::fixed_work(sms_, queue_filler_iterations_, nullptr, stream_);
    timing_start_.record(stream_);
    for (int number = 0; number < kTimedCalls; ++number) {
      if (!run()) return std::numeric_limits<double>::infinity();
    }
    timing_stop_.record(stream_);
    const bool queued_ahead = !timing_start_.query();
    timing_stop_.synchronize();
    if (queued_ahead || doubled == kMostFillerDoublings) return elapsed_ms(timing_start_, timing_stop_);
    queue_filler_iterations_ *= 2;
  }
}

void TunedGemm::tune(Plan& plan, const Operands& product, const std::vector<cublasLtMatmulAlgo_t>& heuristic) {
  const std::vector<Candidate> candidates = candidates_for(plan, product, heuristic);
  // Clocks settled first: tuning from an idle GPU, 8 processes on one H100 chose 8 plans.
  const ClockSettling clocks = settle_gpu_clocks(stream_);
  // Every candidate's product is compared with the float64 one of the same operands before it may be chosen
  // (CUTLASS's profiler and XLA's autotuner verify theirs likewise): a wrong candidate must not win on speed.
  const kernels::GemmReference reference = reference_of(plan, product);
  ShapeTuning& tuning = plan.tuning;
  const std::string shape = shape_label(product.key(sm_count_target_));
  const auto time_candidate = [&](const Candidate& candidate) { return time_on_gpu(plan, candidate, product); };
  // Every candidate once, verified on its last call's product (infinity if rejected); then those that could be ties
  // again, in turn, each keeping its lowest time, so that which of them are ties depends less on one timing's noise.
  std::vector<double> ms;
  for (const Candidate& candidate : candidates) {
    const double first = time_candidate(candidate);
    ms.push_back(first < std::numeric_limits<double>::infinity() && verified(plan, reference, product, candidate.name)
                     ? first
                     : std::numeric_limits<double>::infinity());
  }
  double fastest_first = std::numeric_limits<double>::infinity();
  for (double t : ms) fastest_first = std::min(fastest_first, t);
  MGPU_REQUIRE(fastest_first < std::numeric_limits<double>::infinity(),
               "no cuBLASLt algorithm (nor our kernel) ran a " + std::to_string(product.m) + "x" +
                   std::to_string(product.n) + "x" + std::to_string(product.k) +
                   " GEMM that matched the float64 product (" + std::to_string(tuning.rejected.size()) + " of " +
                   std::to_string(tuning.checked) + " candidates rejected)");
  for (int round = 0; round < kRetimeRounds; ++round) {
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      if (ms[i] <= kRetimeWithin * fastest_first) ms[i] = std::min(ms[i], time_candidate(candidates[i]));
    }
  }
  std::vector<int> families;
  for (const Candidate& candidate : candidates) families.push_back(candidate.family);
  for (std::size_t i : rank_candidates(ms, kTiesWithin, kOptionsWithin, kMostOptions, families)) {
    tuning.choices.push_back(candidates[i].choice);
    tuning.alone_us.push_back(1e3 * ms[i] / kTimedCalls);
    tuning.names.push_back(candidates[i].name);
  }
  if (gemm_report_enabled()) {  // for performance work: what was chosen, and by how much
    std::fprintf(stderr, "gemm %s: clocks %s after %d launches in %.3f s (fixed work %.3f ms first, %.3f ms last)\n",
                 shape.c_str(), clocks.settled ? "settled" : "NOT settled", clocks.launches, clocks.seconds,
                 clocks.first_ms, clocks.last_ms);
    std::fprintf(stderr,
                 "gemm %s: fastest %.2f us; chosen %s %.2f us (%zu options within %.2fx, ties within %.2fx; %d "
                 "candidates verified, %zu rejected)\n",
                 shape.c_str(), 1e3 * *std::min_element(ms.begin(), ms.end()) / kTimedCalls,
                 tuning.names.front().c_str(), tuning.alone_us.front(), tuning.choices.size(), kOptionsWithin,
                 kTiesWithin, tuning.checked, tuning.rejected.size());
  }
}

kernels::GemmReference TunedGemm::reference_of(Plan& plan, const Operands& product) {
  // The stream's earlier work first, so that the time counted is the reference's alone.
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const auto start = std::chrono::steady_clock::now();
  kernels::GemmReference reference(
      {product.op_a != CUBLAS_OP_N, product.op_b != CUBLAS_OP_N, product.m, product.n, product.k, product.a,
       product.lda, product.b, product.ldb, operands_ == CUDA_R_16BF},
      stream_);
  plan.tuning.verification_seconds += seconds_since(start);
  return reference;
}

bool TunedGemm::verified(Plan& plan, const kernels::GemmReference& reference, const Operands& product,
                         const std::string& name) {
  if (corrupted_by_fault_hook(name)) {
    const float wrong = std::numeric_limits<float>::quiet_NaN();
    MGPU_CUDA_CHECK(cudaMemcpyAsync(product.c, &wrong, sizeof wrong, cudaMemcpyHostToDevice, stream_));
  }
  const auto start = std::chrono::steady_clock::now();
  const kernels::GemmComparison found =
      reference.compare(product.c, product.ldc, verification_bound(compute_, product.k), stream_);
  ShapeTuning& tuning = plan.tuning;
  tuning.verification_seconds += seconds_since(start);
  ++tuning.checked;
  if (found.mismatches == 0) return true;
  const std::string shape = shape_label(product.key(sm_count_target_));
  tuning.rejected.push_back(name + mismatch_text(found, product.m, product.n));
  if (gemm_report_enabled())
    std::fprintf(stderr, "gemm %s: rejected %s\n", shape.c_str(), tuning.rejected.back().c_str());
  MGPU_REQUIRE(!rejection_is_fatal(),
               "GEMM " + shape + ": candidate " + tuning.rejected.back() + " (MGPU_GEMM_VERIFY=fatal)");
  return false;
}

void TunedGemm::adopt_planned(Plan& plan, const Operands& product, const std::vector<cublasLtMatmulAlgo_t>& heuristic) {
  const std::string shape = shape_label(product.key(sm_count_target_));
  const std::string where = "--gemm-plan " + followed_plan_.source + ": GEMM " + shape;
  const auto wanted = followed_plan_.option_of_shape.find(shape);
  if (wanted == followed_plan_.option_of_shape.end())
    throw UsageError(where + " is not in the plan (a plan of another configuration, precision or build)");
  const std::vector<Candidate> candidates = candidates_for(plan, product, heuristic);
  const auto named = std::find_if(candidates.begin(), candidates.end(),
                                  [&](const Candidate& candidate) { return candidate.name == wanted->second; });
  if (named == candidates.end())
    throw UsageError(where + ": '" + wanted->second + "' is not a candidate of this GPU and cuBLAS");
  const kernels::GemmReference reference = reference_of(plan, product);
  const double ms = time_on_gpu(plan, *named, product);
  if (ms == std::numeric_limits<double>::infinity() || !verified(plan, reference, product, named->name))
    throw UsageError(
        where + ": '" + wanted->second + "' " +
        (plan.tuning.rejected.empty() ? "refused the shape's buffers" : "differs from the float64 product"));
  plan.tuning.choices = {named->choice};
  plan.tuning.alone_us = {1e3 * ms / kTimedCalls};
  plan.tuning.names = {named->name};
}

void forget_gemm_tunings() { process_gemm_tunings().clear(); }

bool gemm_report_enabled() {
  static const bool enabled = std::getenv("MGPU_GEMM_REPORT") != nullptr;
  return enabled;
}

cublasComputeType_t compute_type_for(Precision precision) {
  // CUBLAS_COMPUTE_32F: fp32 products and accumulation (of fp32 or bf16 operands). FAST_TF32: tensor cores round the
  // fp32 inputs to TF32; tf32x3's operands are TF32 values already (its splits), so they pass unchanged.
  const bool tf32 = precision == Precision::tf32 || precision == Precision::tf32x3;
  return tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

cudaDataType_t operand_type_for(Precision precision) { return precision == Precision::bf16 ? CUDA_R_16BF : CUDA_R_32F; }

std::string TunedGemm::choices_text() const {
  std::string lines;
  for (const TunedGemm::ShapeOptions& shape : shape_options()) {
    char alone[64];
    std::snprintf(alone, sizeof alone, " (%.2f us alone", shape.alone_us[shape.selected]);
    lines += "gemm " + shape.shape + ": " + shape.options[shape.selected] + alone;
    if (shape.selected != 0) {
      std::snprintf(alone, sizeof alone, "; the choice made alone, %.2f us, was ", shape.alone_us[0]);
      lines += alone + shape.options[0];
    }
    lines += "; " + std::to_string(shape.checked) + " candidates verified";
    if (!shape.rejected.empty()) lines += ", rejected: " + shape.rejected.front();
    if (shape.rejected.size() > 1) lines += " and " + std::to_string(shape.rejected.size() - 1) + " more";
    lines += ")\n";
  }
  return lines;
}

int TunedGemm::candidates_checked() const {
  int checked = 0;
  for (const TunedGemm::ShapeOptions& shape : shape_options()) checked += shape.checked;
  return checked;
}

double TunedGemm::verification_seconds() const {
  double seconds = 0.0;
  for (const TunedGemm::ShapeOptions& shape : shape_options()) seconds += shape.verification_seconds;
  return seconds;
}

int TunedGemm::candidates_rejected() const {
  int rejected = 0;
  for (const TunedGemm::ShapeOptions& shape : shape_options()) rejected += static_cast<int>(shape.rejected.size());
  return rejected;
}

}  // namespace mgpu
