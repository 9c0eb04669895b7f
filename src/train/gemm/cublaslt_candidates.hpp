// Purpose: cuBLASLt's candidates as the GEMM tuner offers them: split-K variants of an algorithm, the operands'
// alignment, the heuristic's guesses, and the name a candidate has in reports and GEMM plans.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mgpu {

// cuBLASLt's best guesses for a product (at most `most`, in its order) that accept operands aligned to `alignment`
// bytes and need no more workspace than given.
std::vector<cublasLtMatmulAlgo_t> heuristic_candidates(cublasLtHandle_t handle, cublasLtMatmulDesc_t operation,
                                                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                       cublasLtMatrixLayout_t c, int alignment,
                                                       std::size_t workspace_bytes, int most);

// `algo` with its K split in `splits` parts, when the algorithm supports it and cuBLASLt accepts the result for this
// problem within the workspace; the reduction goes through the workspace in the compute type (deterministic).
bool split_variant(cublasLtHandle_t handle, cublasLtMatmulDesc_t operation, cublasLtMatrixLayout_t a,
                   cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo, int splits,
                   std::size_t workspace_bytes, cublasLtMatmulAlgo_t& variant);

// The largest power of two up to 16 that divides the address: cuBLASLt's vectorised kernels need it.
int alignment_of(const void* pointer);

// "cuBLASLt (algorithm 21, tile 18, stages 8, K in 4 parts)": every setting in which two of cuBLASLt's candidates may
// differ (the rarely set ones only where they are not 0), so that a GEMM plan names exactly one.
std::string describe_algo(const cublasLtMatmulAlgo_t& algo);

}  // namespace mgpu
