#!/usr/bin/env bash
# Purpose: installs the Debian/Ubuntu packages mgpu_bench builds and tests with (only those missing); CUDA and NCCL
# come from /usr/local/cuda (or the system) when present, otherwise the CPU fallback is built. slurm-wlm (with its
# mpi/pmix plugin in slurm-wlm-basic-plugins) and munge are for the launch scripts and the Slurm test; chromium opens
# mgpu_analyze's report page headless in its test; gcovr prints CI's coverage summary; clang-format checks the
# formatting of every C++/CUDA file in the tests; iproute2 builds the two-node cluster of its test.
set -euo pipefail

packages=(build-essential cmake git pkg-config openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools
  libboost-program-options-dev libboost-dev libopenblas-dev libgtest-dev python3 python3-h5py python3-numpy
  nlohmann-json3-dev gnuplot-nox slurm-wlm munge chromium gcovr clang-format iproute2)
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
