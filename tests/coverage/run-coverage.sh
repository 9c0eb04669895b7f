#!/usr/bin/env bash
# Purpose: CI's coverage step: the CPU test suite in a gcc --coverage build (MGPU_COVERAGE=ON), then gcovr's line and
# branch coverage of src/ and analysis/ (throw branches and unreachable branches excluded), per file and in total.
# Usage: tests/coverage/run-coverage.sh   (BUILD_DIR, default build-coverage/; extra arguments go to ctest)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-coverage}"
BUILD_DIR="$build" "$root/launch/build.sh" -DMGPU_ENABLE_CUDA=OFF -DMGPU_COVERAGE=ON
# Counters from an earlier run would add to this one's.
find "$build" -name '*.gcda' -delete
# The Slurm test only repeats, through srun, what the hostfile test runs; it adds no line.
ctest --test-dir "$build" --label-exclude no_sanitize --output-on-failure --timeout 900 -j"$(nproc)" "$@"
cd "$root"
gcovr --root "$root" --object-directory "$build" --filter 'src/' --filter 'analysis/' --exclude-throw-branches \
  --exclude-unreachable-branches -j"$(nproc)" --sort-percentage --print-summary
