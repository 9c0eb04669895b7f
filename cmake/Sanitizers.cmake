# MGPU_SANITIZE=ON: AddressSanitizer (leaks included), UBSan and libstdc++'s bounds checks on every C/C++ target, so
# an off-by-one read in the CPU code is an error in the test suite instead of a silent wrong number (docs/testing.md).
option(MGPU_SANITIZE "Build with AddressSanitizer, UBSan and libstdc++ assertions (CPU-only builds)" OFF)
if(MGPU_SANITIZE)
  if(MGPU_HAVE_CUDA)
    # nvcc's host objects and the CUDA runtime are not instrumented; compute-sanitizer covers the GPU side.
    message(FATAL_ERROR "MGPU_SANITIZE=ON needs -DMGPU_ENABLE_CUDA=OFF (use bench/compute_sanitizer.sh for the GPU)")
  endif()
  # -fno-sanitize-recover=all: a UBSan finding aborts the test instead of printing and passing.
  # No _GLIBCXX_SANITIZE_VECTOR: Debian's libgtest.a is built without it, and a vector that gtest's code grows while
  # ours annotated it is then reported as an overflow (seen in test registration); _GLIBCXX_ASSERTIONS still checks
  # every operator[], front() and back().
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g
    -D_GLIBCXX_ASSERTIONS)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
  # What every test process of this build runs with (tests/CMakeLists.txt adds it to each test's environment, and
  # mpiexec hands it on to its local ranks): leaks are errors, suppressions only for the MPI/HDF5 stacks.
  set(MGPU_SANITIZER_SUPPRESSIONS ${PROJECT_SOURCE_DIR}/tests/sanitizers)
  set(MGPU_SANITIZER_ENVIRONMENT
    # fast_unwind_on_malloc=0: full stacks through the MPI libraries (built without frame pointers), which the
    # suppressions need to see whose allocation leaked.
    "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
    "LSAN_OPTIONS=suppressions=${MGPU_SANITIZER_SUPPRESSIONS}/lsan.supp:print_suppressions=0"
    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    # Open MPI keeps its plugins loaded at exit, so leak reports name their library and the suppressions can match.
    "OMPI_MCA_mca_base_component_disable_dlclose=1")
endif()
