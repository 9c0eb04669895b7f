// Purpose: verifying GEMM candidates (gemm_verification.hpp).
#include "train/gemm/gemm_verification.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/cuda_check.hpp"
#include "platform/fault_hooks.hpp"

namespace mgpu {
namespace {

// Test-only fault hook (docs/reliability.md): MGPU_FAULT_GEMM_CANDIDATE=TEXT corrupts the output of every candidate
// whose name contains TEXT ("*": all) before it is compared, so a test can see verification reject it.
bool named_by_fault_hook(const char* variable, const std::string& name) {
  const char* target = fault_hook(variable);
  if (target == nullptr) return false;
  return std::strcmp(target, "*") == 0 || name.find(target) != std::string::npos;
}

bool verify_mode_is(const char* wanted) {
  const char* mode = std::getenv("MGPU_GEMM_VERIFY");
  return mode != nullptr && std::strcmp(mode, wanted) == 0;
}

}  // namespace

// The rounding an fp32-accumulated product may show against float64, per element and relative to sum_l |a_il b_lj|:
// the accumulation's, 8 sqrt(K) u (u = 2^-24; a K-term sum in any order whose rounding errors add up as a random walk
// stays within about 3 sqrt(K) u even when every term has the same sign), plus, with TF32, the rounding of both
// operands (2 x 2^-11). bf16 operands are exact in the reference, which reads the same bf16 values. A wrong candidate
// (a part of K lost or counted twice, a tile written to the wrong place) is off by a sizeable part of |c| instead.
double verification_bound(cublasComputeType_t compute, int k) {
  const double accumulation = 8.0 * std::sqrt(static_cast<double>(k)) * std::ldexp(1.0, -24);
  return accumulation + (compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? 2.0 * std::ldexp(1.0, -11) : 0.0);
}

bool corrupted_by_fault_hook(const std::string& name) { return named_by_fault_hook("MGPU_FAULT_GEMM_CANDIDATE", name); }
// Test-only fault hook: MGPU_FAULT_GEMM_UNWRITTEN=TEXT makes every candidate whose name contains TEXT launch nothing,
// a kernel that leaves its output unwritten, so that a test sees verification reject it.
bool unwritten_by_fault_hook(const std::string& name) { return named_by_fault_hook("MGPU_FAULT_GEMM_UNWRITTEN", name); }

// ": 3 of 2048 elements beyond the float64 bound (worst 12.5 x the bound)": what a failed comparison found.
std::string mismatch_text(const kernels::GemmComparison& found, int m, int n) {
  char text[160];
  std::snprintf(text, sizeof text, ": %llu of %lld elements beyond the float64 bound (worst %.3g x the bound)",
                found.mismatches, static_cast<long long>(m) * n, found.worst_ratio);
  return text;
}

// MGPU_GEMM_VERIFY=fatal: a rejected candidate stops the program (for kernel development) instead of being skipped.
bool rejection_is_fatal() { return verify_mode_is("fatal"); }

// MGPU_GEMM_VERIFY=calls (a diagnostic, slow: a float64 product and a synchronisation per call): every call made
// outside a capture is compared, as stored (epilogue included, except dropout's), with the float64 product of its own
// operands, and a mismatch is printed with the shape and what ran it.
void check_call(cudaStream_t stream, const std::string& shape, const std::string& choice, bool ta, bool tb, int m,
                int n, int k, const void* a, int lda, const void* b, int ldb, bool bf16, float* c, int ldc,
                double bound, const kernels::SkinnyEpilogue* folded) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  MGPU_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) return;
  kernels::ReferenceEpilogue epilogue;
  if (folded != nullptr) {
    using Kind = kernels::SkinnyEpilogue::Kind;
    if (folded->kind == Kind::bias_relu_dropout && folded->drop_probability > 0.0f) return;  // the mask is unknown
    epilogue.kind = folded->kind == Kind::relu_dropout_backward ? kernels::ReferenceEpilogue::Kind::relu_backward
                                                                : kernels::ReferenceEpilogue::Kind::bias_relu;
    epilogue.bias = folded->bias;
    epilogue.activation = folded->activation;
    epilogue.keep_scale = folded->keep_scale;
  }
  const kernels::GemmReference reference({ta, tb, m, n, k, a, lda, b, ldb, bf16}, stream);
  const kernels::GemmComparison found = reference.compare(c, ldc, bound, stream, epilogue);
  if (found.mismatches == 0) return;
  std::fprintf(stderr, "gemm call %s by %s%s%s\n", shape.c_str(), choice.c_str(),
               folded != nullptr ? " with its epilogue" : "", mismatch_text(found, m, n).c_str());
}
bool every_call_is_checked() { return verify_mode_is("calls"); }

}  // namespace mgpu
