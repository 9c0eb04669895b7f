// Purpose: GEMMs with fp32 output (fp32 or bf16 operands) through cuBLASLt or our split-K kernel, the algorithm for
// each shape chosen by timing cuBLASLt's own candidates (each also with its K dimension split 2..32 ways) and, for
// fp32 products with at most 64 columns, our kernel's configurations (skinny_gemm.cuh), each first verified against
// the float64 product of the same operands (reference_gemm.cuh; a wrong one is never chosen), once (outside any graph
// capture), so the skinny small-batch products of this benchmark do not run on a few SMs; every later call (eager or
// captured) reuses it. The candidates nearly as fast alone stay available, so that a caller who can time the whole
// step (CudaTrainer's step-level tuning) can choose among them by what the step measures.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/skinny_gemm.cuh"
#include "platform/cuda_resources.hpp"
#include "train/gemm/gemm_plan.hpp"
#include "train/gemm/gemm_tunings.hpp"

namespace mgpu {

enum class Precision;  // trainer.hpp
namespace kernels {
class GemmReference;  // reference_gemm.cuh
}
struct GemmChoice;  // tuning_store.hpp

// The TunedGemm arguments of a --precision: compute type and operand (A and B) element type.
cublasComputeType_t compute_type_for(Precision precision);
cudaDataType_t operand_type_for(Precision precision);

// How a TunedGemm picks each shape's algorithm: tuned (every candidate verified against float64 and timed; the
// choice is shared by the TunedGemms of the same GemmTunings), or library_default (cuBLASLt's first heuristic answer,
// neither timed nor shared, never our kernel: the plain reference step of the math check, math_check.hpp).
enum class GemmSelection { tuned, library_default };

// Drops the process's tunings, those of TunedGemms given no GemmTunings (tests): the next such TunedGemm tunes every
// shape afresh. No TunedGemm using them may be alive.
void forget_gemm_tunings();

// MGPU_GEMM_REPORT set: the tuner and the step-level search print what they chose (and rejected) to stderr. Read once
// per process, here only.
bool gemm_report_enabled();

class TunedGemm {
 public:
  // All work goes to `stream`; `workspace` (device memory, `workspace_bytes`) is used by every call, so no call
  // allocates (a requirement of stream capture). compute: CUBLAS_COMPUTE_32F or CUBLAS_COMPUTE_32F_FAST_TF32.
  // operands: the element type of A and B, CUDA_R_32F or CUDA_R_16BF (bf16 inputs, fp32 accumulation); C is fp32.
  // `tunings`: the job's (gemm_tunings.hpp), shared with its other TunedGemms; none: the process's.
  TunedGemm(cudaStream_t stream, cublasComputeType_t compute, cudaDataType_t operands, void* workspace,
            std::size_t workspace_bytes, GemmSelection selection = GemmSelection::tuned,
            GemmTunings* tunings = nullptr);
  ~TunedGemm();
  TunedGemm(const TunedGemm&) = delete;
  TunedGemm& operator=(const TunedGemm&) = delete;

  // Column-major C[m, n] = op_a(A) op_b(B) (alpha 1, beta 0: C is only written), or with `accumulate`
  // C += op_a(A) op_b(B) (beta 1; the same algorithm, cuBLASLt applies beta in every one). The first call of a shape
  // (and pointer alignment) times the candidates on these very buffers, synchronising the stream; it must therefore not
  // happen while the stream is being captured (CudaTrainer makes one eager step before capturing).
  // A and B hold elements of the constructor's operand type. `a_is_stable`: no kernel that may still be running
  // ahead of this call on the stream writes A (the step's weights), so our kernel may read it early
  // (skinny_gemm.cuh); cuBLASLt ignores it. `epilogue` (non-null, not with `accumulate`): applied to C by our kernel
  // where it runs the shape; returns whether it was, so the caller runs the elementwise pass itself otherwise.
  bool multiply(cublasOperation_t op_a, cublasOperation_t op_b, int m, int n, int k, const void* a, int lda,
                const void* b, int ldb, float* c, int ldc, bool accumulate = false, bool a_is_stable = false,
                const kernels::SkinnyEpilogue* epilogue = nullptr);

  using Choice = GemmChoice;  // what runs a shape (tuning_store.hpp)

  // The shapes this TunedGemm has run, in a fixed order, each with its options: the candidates that took at most
  // kOptionsWithin times the fastest's time alone, at most kMostOptions. Option 0, the choice until select() says
  // otherwise, is the first listed (cuBLASLt's ranking, then our kernel's) of those within kTiesWithin of the fastest:
  // independent processes time the same candidates a few percent apart, and must still choose alike
  // (candidate_ranking.hpp); then the fastest of every other kind of kernel (cuBLASLt's; ours by its splits), all of
  // them; then the others, fastest first, while there are fewer than kMostOptions.
  static constexpr double kOptionsWithin = 1.25;
  static constexpr double kTiesWithin = 1.03;
  static constexpr int kMostOptions = 4;
  struct ShapeOptions {
    std::string shape;                 // "TN m=1024 n=32 k=4800"
    std::vector<std::string> options;  // what runs it: "skinny (32 columns, 8 splits, cluster sum)", "cuBLASLt (...)"
    std::vector<double> alone_us;      // each option's time per call alone (back-to-back calls)
    int selected = 0;
    int checked = 0;                    // candidates compared with the float64 product before being timed
    std::vector<std::string> rejected;  // those that differed beyond the rounding bound (never options), and how
    double verification_seconds = 0.0;  // wall time of its float64 reference and of every comparison with it
  };
  std::vector<ShapeOptions> shape_options() const;
  // What runs each shape, one line a shape ("gemm SHAPE: OPTION (T us alone; ...; N candidates verified)"): the
  // results file's gemm_choices, which parse_gemm_choices (gemm_plan.hpp) reads back as a plan.
  std::string choices_text() const;
  // Over every shape: the candidates verified, and those verification rejected.
  int candidates_checked() const;
  int candidates_rejected() const;
  // Over every shape: the wall time verification took (the float64 references and the comparisons), the part of
  // set-up that verifying the candidates adds.
  double verification_seconds() const;
  // Later calls and captures of shape `shape` (an index into shape_options()) run its option `option`. Other
  // TunedGemms of the same GemmTunings that meet the shape later take the same.
  void select(std::size_t shape, int option);
  // Every shape met from now on runs the candidate `plan` names for it (--gemm-plan), verified against the float64
  // product like any candidate but not timed against the others; its only option. UsageError naming the plan's
  // source when the plan has no choice for a shape, names a candidate this GPU and library do not offer, or names one
  // whose product is wrong here. An empty plan: tune (the default).
  void follow_plan(GemmPlan plan) { followed_plan_ = std::move(plan); }
  // The calls from now on are chosen and launched by cuBLASLt for `sms` multiprocessors instead of all of them
  // (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET): GEMMs that overlap a collective whose CTAs hold the rest, where a kernel
  // sized for every SM would wait for them or run a second, nearly empty wave. 0: all of them (the default). A shape
  // under a target is a shape of its own (tuned and listed apart, its label ending "for N SMs"); switching back and
  // forth costs nothing once each was met. Our own kernel's candidates are not affected.
  void set_sm_count_target(int sms);
  int sm_count_target() const noexcept { return sm_count_target_; }
  int multiprocessors() const noexcept { return sms_; }  // the device's, the largest target

 private:
  struct Plan;
  // ops, m, n, k, lds, alignment, SM count target (0: every SM)
  using Key = std::tuple<int, int, int, int, int, int, int, int, int, int>;
  // One product's arguments, as multiply() was given them.
  struct Operands {
    cublasOperation_t op_a, op_b;
    int m, n, k;
    const void* a;
    int lda;
    const void* b;
    int ldb;
    float* c;
    int ldc;
    Key key(int sm_count_target) const;  // its sizes, leading dimensions, the operands' alignment and the target
  };
  struct Candidate;  // a Choice and its name in reports (tuned_gemm.cpp)
  // The shape's plan: the process's tuning where one exists, else tuned on these operands (GemmSelection::tuned) or
  // the heuristic's first answer that fits the workspace, as the only option (library_default). keep_output: the
  // call adds to C, so tuning leaves C as it found it.
  Plan& plan_for(const Key& key, const Operands& product, bool keep_output);
  std::unique_ptr<Plan> describe_shape(const Key& key) const;  // cuBLASLt's descriptors of the shape
  std::vector<cublasLtMatmulAlgo_t> heuristic_algorithms(const Plan& plan, int alignment) const;
  std::vector<Candidate> candidates_for(const Plan& plan, const Operands& product,
                                        const std::vector<cublasLtMatmulAlgo_t>& heuristic);
  bool run_candidate(const Plan& plan, const Choice& choice, const Operands& product);  // false: refused
  // The GPU's time of kTimedCalls calls back to back, after one untimed call on the product filled with NaN;
  // infinity for a candidate that refuses these buffers (it is simply not chosen).
  double time_on_gpu(const Plan& plan, const Candidate& candidate, const Operands& product);
  // Verifies and times every candidate on the product's buffers, and keeps the options (shape_options()).
  void tune(Plan& plan, const Operands& product, const std::vector<cublasLtMatmulAlgo_t>& heuristic);
  // The followed plan's candidate for the shape, verified, as its only option.
  void adopt_planned(Plan& plan, const Operands& product, const std::vector<cublasLtMatmulAlgo_t>& heuristic);
  // Whether the product a candidate just wrote (product.c) matches `reference`; a mismatch is counted and named in
  // the shape's rejected list (MGPU_GEMM_REPORT prints it; MGPU_GEMM_VERIFY=fatal makes it an error).
  bool verified(Plan& plan, const kernels::GemmReference& reference, const Operands& product, const std::string& name);
  // The float64 reference of the product's operands, its wall time counted in the shape's verification time.
  kernels::GemmReference reference_of(Plan& plan, const Operands& product);

  GemmTunings::Store* store_;  // the tunings shared with other TunedGemms (the job's, or the process's)
  cudaStream_t stream_;
  cublasComputeType_t compute_;
  cudaDataType_t operands_;
  void* workspace_;
  std::size_t workspace_bytes_;
  GemmSelection selection_;
  bool check_every_call_;  // MGPU_GEMM_VERIFY=calls, read once: multiply() runs inside timed eager steps
  // The math check's fault hook (gemm_corruption_requested), tuned only, read once: after verification chose the
  // algorithm, the first column of every product is zeroed (a wrong kernel verification missed); the plain reference
  // step stays right.
  bool corrupt_outputs_;
  cublasLtHandle_t handle_ = nullptr;
  kernels::SkinnyWorkspaceMemory skinny_workspace_;  // our kernel's partial tiles (last_block configurations)
  int sms_ = 0;                                      // of the device current at construction
  int queue_filler_iterations_ = 100000;             // the fixed work timed calls queue behind (time_on_gpu())
  CudaEvent timing_start_;                           // around the timed calls of time_on_gpu()
  CudaEvent timing_stop_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  GemmPlan followed_plan_;            // follow_plan(); empty: tune
  std::int32_t sm_count_target_ = 0;  // set_sm_count_target(); 0: every SM
};

}  // namespace mgpu
