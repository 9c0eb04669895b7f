# MGPU_COVERAGE=ON: gcc line and branch coverage (--coverage) on every C/C++ target, summarised by gcovr at the end of
# CI (.ci/coverage_summary.sh); unoptimised so each line and branch maps to the source.
option(MGPU_COVERAGE "Build with gcc coverage instrumentation (CPU-only builds)" OFF)
if(MGPU_COVERAGE)
  add_compile_options(--coverage -O0 -g)
  add_link_options(--coverage)
endif()
