// Purpose: verifying GEMM candidates against the float64 product: the rounding bound, what a failed comparison
// reports, the MGPU_GEMM_VERIFY modes and the test-only hooks that make a candidate wrong.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime.h>

#include <string>

#include "kernels/reference_gemm.cuh"
#include "kernels/skinny_gemm.cuh"

namespace mgpu {

// The rounding an fp32-accumulated product may show against float64, per element and relative to sum_l |a_il b_lj|.
double verification_bound(cublasComputeType_t compute, int k);
// ": 3 of 2048 elements beyond the float64 bound (worst 12.5 x the bound)": what a failed comparison found.
std::string mismatch_text(const kernels::GemmComparison& found, int m, int n);
// MGPU_GEMM_VERIFY=fatal: a rejected candidate stops the program instead of being skipped.
bool rejection_is_fatal();
// MGPU_GEMM_VERIFY=calls: every eager call is compared with the float64 product of its operands (check_call).
bool every_call_is_checked();
// Test-only hooks (docs/reliability.md): MGPU_FAULT_GEMM_CANDIDATE=TEXT corrupts the output of every candidate whose
// name contains TEXT ("*": all) before it is compared; MGPU_FAULT_GEMM_UNWRITTEN=TEXT makes such candidates launch
// nothing.
bool corrupted_by_fault_hook(const std::string& name);
bool unwritten_by_fault_hook(const std::string& name);
// With every_call_is_checked(): one call outside a capture, as stored (epilogue included, except dropout's), against
// the float64 product of its own operands; a mismatch is printed with the shape and what ran it.
void check_call(cudaStream_t stream, const std::string& shape, const std::string& choice, bool ta, bool tb, int m,
                int n, int k, const void* a, int lda, const void* b, int ldb, bool bf16, float* c, int ldc,
                double bound, const kernels::SkinnyEpilogue* folded);

}  // namespace mgpu
