// Purpose: cuBLASLt's candidates (cublaslt_candidates.hpp).
#include "train/gemm/cublaslt_candidates.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "platform/cuda_check.hpp"

namespace mgpu {
namespace {

// An unsigned configuration attribute of `algo` (of the type the attribute has: uint16_t or uint32_t).
template <typename T>
unsigned config_attribute(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value = 0;
  std::size_t written = 0;
  MGPU_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written));
  return value;
}

}  // namespace

// `algo` with its K split in `splits` parts, when the algorithm supports it and cuBLASLt accepts the result for
// this problem within the workspace; the reduction goes through the workspace in the compute type (deterministic).
bool split_variant(cublasLtHandle_t handle, cublasLtMatmulDesc_t operation, cublasLtMatrixLayout_t a,
                   cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo, int splits,
                   std::size_t workspace_bytes, cublasLtMatmulAlgo_t& variant) {
  std::int32_t supported = 0;
  std::uint32_t schemes = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &supported, sizeof supported,
                                        &written) != CUBLAS_STATUS_SUCCESS ||
      supported == 0)
    return false;
  if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &schemes, sizeof schemes,
                                        &written) != CUBLAS_STATUS_SUCCESS ||
      (schemes & CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE) == 0)
    return false;
  variant = algo;
  const std::int32_t parts = splits;
  const std::uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  if (cublasLtMatmulAlgoConfigSetAttribute(&variant, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &parts, sizeof parts) !=
          CUBLAS_STATUS_SUCCESS ||
      cublasLtMatmulAlgoConfigSetAttribute(&variant, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme) !=
          CUBLAS_STATUS_SUCCESS)
    return false;
  cublasLtMatmulHeuristicResult_t check{};
  return cublasLtMatmulAlgoCheck(handle, operation, a, b, c, c, &variant, &check) == CUBLAS_STATUS_SUCCESS &&
         check.workspaceSize <= workspace_bytes;
}

// The largest power of two up to 16 that divides the address: cuBLASLt's vectorised kernels need it. (bf16 operands
// may sit at any element, so 2 bytes.)
int alignment_of(const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  int alignment = 16;
  while (alignment > 2 && address % alignment != 0) alignment /= 2;
  return alignment;
}

// "cuBLASLt (algorithm 21, tile 18, stages 8, K in 4 parts)": for reports, and the name a GEMM plan gives a candidate
// (gemm_plan.hpp), so every setting in which two of cuBLASLt's candidates may differ is in it (the rarely set ones
// only where they are not 0).
std::string describe_algo(const cublasLtMatmulAlgo_t& algo) {
  std::int32_t id = 0, parts = 1;
  std::size_t written = 0;
  MGPU_CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written));
  MGPU_CUBLAS_CHECK(
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &parts, sizeof parts, &written));
  std::string text = "cuBLASLt (algorithm " + std::to_string(id) + ", tile " +
                     std::to_string(config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID)) + ", stages " +
                     std::to_string(config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  const std::pair<const char*, unsigned> rare[] = {
      {"swizzle", config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
      {"option", config_attribute<std::uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)},
      {"inner shape", config_attribute<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)},
      {"cluster shape", config_attribute<std::uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)}};
  for (const auto& [name, value] : rare) {
    if (value != 0) text += std::string(", ") + name + " " + std::to_string(value);
  }
  return text + (parts > 1 ? ", K in " + std::to_string(parts) + " parts)" : ")");
}

std::vector<cublasLtMatmulAlgo_t> heuristic_candidates(cublasLtHandle_t handle, cublasLtMatmulDesc_t operation,
                                                       cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                                       cublasLtMatrixLayout_t c, int alignment,
                                                       std::size_t workspace_bytes, int most) {
  cublasLtMatmulPreference_t preference = nullptr;
  MGPU_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(most));
  int returned = 0;
  try {
    const std::uint64_t workspace = workspace_bytes;
    const auto bytes = static_cast<std::uint32_t>(alignment);
    MGPU_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                           &workspace, sizeof workspace));
    for (auto attribute : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                           CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
      MGPU_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, attribute, &bytes, sizeof bytes));
    }
    MGPU_CUBLAS_CHECK(
        cublasLtMatmulAlgoGetHeuristic(handle, operation, a, b, c, c, preference, most, results.data(), &returned));
  } catch (...) {
    MGPU_CUBLAS_WARN(cublasLtMatmulPreferenceDestroy(preference));
    throw;
  }
  MGPU_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  std::vector<cublasLtMatmulAlgo_t> algorithms;  // in the heuristic's order
  for (int i = 0; i < returned; ++i) {
    if (results[i].state == CUBLAS_STATUS_SUCCESS && results[i].workspaceSize <= workspace_bytes)
      algorithms.push_back(results[i].algo);
  }
  return algorithms;
}

}  // namespace mgpu
