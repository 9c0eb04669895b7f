#!/usr/bin/env bash
# Purpose: installs the Debian/Ubuntu packages mgpu_bench needs (only those missing); CUDA and NCCL come from
# /usr/local/cuda (or the system) when present, otherwise the CPU fallback is built. Without arguments: what building
# and running need (launch/build-and-run.sh). With --tests, also what the test suite needs (tests/build-and-test.sh):
# GoogleTest; hdf5-tools and h5py, which read the results files back; slurm-wlm (with its mpi/pmix plugin in
# slurm-wlm-basic-plugins) and munge for the Slurm tests; chromium, which opens the report page headless; gcovr for
# CI's coverage summary; clang-format for the format check; iproute2, which builds the two-node cluster of its test.
# Usage: launch/install-deps.sh [--tests]
set -euo pipefail

packages=(build-essential cmake git pkg-config openmpi-bin libopenmpi-dev libhdf5-dev libboost-program-options-dev
  libboost-dev libopenblas-dev nlohmann-json3-dev gnuplot-nox python3)
case "${1:-}" in
  "") ;;
  --tests) packages+=(libgtest-dev hdf5-tools python3-h5py python3-numpy slurm-wlm munge chromium gcovr clang-format
             iproute2) ;;
  *) echo "install-deps: unknown argument '$1' (give nothing, or --tests)" >&2; exit 2 ;;
esac
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  if [[ $EUID -ne 0 ]]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: all packages present"
fi
