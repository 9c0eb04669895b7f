#!/usr/bin/env bash
# Purpose: the README's second command (and CI's): install what is missing, build, and run the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/launch/install-deps.sh" --tests
"$root/launch/build.sh" -DMGPU_BUILD_TESTS=ON
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 600 -j"$(nproc)"
