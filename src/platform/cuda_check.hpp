// Purpose: checking macros for CUDA runtime, cuBLAS and NCCL calls, in the project's one message shape
// ("rank R@host: file:line: call: library: message"), each with a non-throwing twin for destructors.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "platform/error.hpp"

namespace mgpu {

inline std::string cuda_error_message(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
}

inline std::string cublas_error_message(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + ": " + cublasGetStatusString(status);
}

// NCCL's result code says little ("unhandled system error"); its last-error text says what actually failed.
inline std::string nccl_error_message(ncclResult_t result) {
  std::string message = ncclGetErrorString(result);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
  return message;
}

}  // namespace mgpu

// One definition of the check, parameterised by how a failure is reported. The call's text is taken by the public
// macros (#call there), so it reads as written even when the call is itself a macro (cudaGetDeviceProperties).
#define MGPU_DETAIL_CHECK_CALL(report, library, type, success, message, call, call_text)                      \
  do {                                                                                                        \
    const type mgpu_check_rc_ = (call);                                                                       \
    if (mgpu_check_rc_ != (success)) report(library, __FILE__, __LINE__, call_text, message(mgpu_check_rc_)); \
  } while (0)

#define MGPU_CUDA_CHECK(call)                                                                                          \
  MGPU_DETAIL_CHECK_CALL(::mgpu::throw_call_error, "CUDA", cudaError_t, cudaSuccess, ::mgpu::cuda_error_message, call, \
                         #call)
#define MGPU_CUBLAS_CHECK(call)                                                                     \
  MGPU_DETAIL_CHECK_CALL(::mgpu::throw_call_error, "cuBLAS", cublasStatus_t, CUBLAS_STATUS_SUCCESS, \
                         ::mgpu::cublas_error_message, call, #call)
#define MGPU_NCCL_CHECK(call)                                                                                     \
  MGPU_DETAIL_CHECK_CALL(::mgpu::throw_call_error, "NCCL", ncclResult_t, ncclSuccess, ::mgpu::nccl_error_message, \
                         call, #call)

// After a kernel launch: launch-configuration errors are reported by the next runtime call, so ask for them here,
// where file:line still names the launch.
#define MGPU_CUDA_CHECK_LAUNCH() MGPU_CUDA_CHECK(cudaGetLastError())

// Non-throwing twins (print a warning to stderr) for destructors.
#define MGPU_CUDA_WARN(call)                                                                                          \
  MGPU_DETAIL_CHECK_CALL(::mgpu::warn_call_error, "CUDA", cudaError_t, cudaSuccess, ::mgpu::cuda_error_message, call, \
                         #call)
#define MGPU_CUBLAS_WARN(call)                                                                     \
  MGPU_DETAIL_CHECK_CALL(::mgpu::warn_call_error, "cuBLAS", cublasStatus_t, CUBLAS_STATUS_SUCCESS, \
                         ::mgpu::cublas_error_message, call, #call)
#define MGPU_NCCL_WARN(call)                                                                                           \
  MGPU_DETAIL_CHECK_CALL(::mgpu::warn_call_error, "NCCL", ncclResult_t, ncclSuccess, ::mgpu::nccl_error_message, call, \
                         #call)
