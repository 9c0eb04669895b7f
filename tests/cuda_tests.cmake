# The CUDA path's tests; included from tests/CMakeLists.txt when MGPU_HAVE_CUDA. Without a visible GPU they skip,
# saying why.
mgpu_unit_test(test_cuda_mlp)
mgpu_unit_test(test_gpu_devices)
mgpu_unit_test(test_skinny_gemm)
# Two ranks, one GPU each (mpi_test_main.cpp: every rank exits with the same status). NVLink multicast stays off on
# the shared GPU machines (GPU-MACHINES.md).
mgpu_mpi_test(test_cuda_data_parallel)
set_tests_properties(test_cuda_data_parallel PROPERTIES ENVIRONMENT "${MGPU_MPI_TEST_ENVIRONMENT};NCCL_NVLS_ENABLE=0")
