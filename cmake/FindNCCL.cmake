# Imported target NCCL::nccl: the header and library live in the CUDA toolkit here and in /usr on the GPU machines.
find_path(NCCL_INCLUDE_DIR NAMES nccl.h
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl
  HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64)
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  message(FATAL_ERROR "NCCL not found (nccl.h / libnccl.so): set NCCL_ROOT, or configure with -DMGPU_ENABLE_CUDA=OFF")
endif()
add_library(NCCL::nccl UNKNOWN IMPORTED)
set_target_properties(NCCL::nccl PROPERTIES
  IMPORTED_LOCATION "${NCCL_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
message(STATUS "mgpu_bench: NCCL ${NCCL_LIBRARY}")
