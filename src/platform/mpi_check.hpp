// Purpose: MGPU_MPI_CHECK, the checking macro for MPI calls (MPI's own message, rank@host, file:line).
#pragma once

#include <mpi.h>

#include <string>

#include "platform/error.hpp"

namespace mgpu {
inline std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}
}  // namespace mgpu

#define MGPU_MPI_CHECK(call)                                                                              \
  do {                                                                                                    \
    const int mgpu_mpi_rc_ = (call);                                                                      \
    if (mgpu_mpi_rc_ != MPI_SUCCESS)                                                                      \
      ::mgpu::throw_call_error("MPI", __FILE__, __LINE__, #call, ::mgpu::mpi_error_string(mgpu_mpi_rc_)); \
  } while (0)

// The same check for destructors, which must not throw: prints the message as a warning.
#define MGPU_MPI_WARN(call)                                                                              \
  do {                                                                                                   \
    const int mgpu_mpi_rc_ = (call);                                                                     \
    if (mgpu_mpi_rc_ != MPI_SUCCESS)                                                                     \
      ::mgpu::warn_call_error("MPI", __FILE__, __LINE__, #call, ::mgpu::mpi_error_string(mgpu_mpi_rc_)); \
  } while (0)
