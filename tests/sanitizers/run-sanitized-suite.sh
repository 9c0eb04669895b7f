#!/usr/bin/env bash
# Purpose: CI's second half: the whole CPU test suite again, built with AddressSanitizer (leaks included), UBSan and
# libstdc++'s assertions (MGPU_SANITIZE=ON), MPI tests under mpiexec -n 2 included; any sanitizer report fails it.
# Usage: tests/sanitizers/run-sanitized-suite.sh   (BUILD_DIR, default build-sanitize/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-sanitize}"
BUILD_DIR="$build" "$root/launch/build.sh" -DMGPU_ENABLE_CUDA=OFF -DMGPU_SANITIZE=ON
# Tests labelled no_sanitize run no code of this build (tests/CMakeLists.txt); the plain half ran them.
ctest --test-dir "$build" --label-exclude no_sanitize --output-on-failure --timeout 600 -j"$(nproc)"
