#!/usr/bin/env bash
# Purpose: mgpu_bench on this node through mpirun: one rank per GPU (CUDA_VISIBLE_DEVICES, else nvidia-smi), each rank
# bound to a NUMA domain; without a GPU, CPU ranks of the fallback (MGPU_CPU_RANKS, default 2), unbound.
# Usage: launch/run-node.sh [--preset NAME] [--np N] [--] MGPU_BENCH_ARGS...
#   e.g. launch/run-node.sh --preset pcie-host-bridge --config bench/study.ini --output study.h5
#   --preset (or MGPU_PRESET): none (default), pcie-host-bridge, nvlink-default (launch/presets/*.env)
#   --np: ranks (default: one per GPU). MGPU_BENCH: the binary (default build/mgpu_bench).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
mgpu_take_preset_option "$@"
mgpu_require_binary

gpus=0
if [[ -n "${CUDA_VISIBLE_DEVICES+x}" ]]; then
  # The launcher's own restriction wins; an empty value means no GPU at all.
  [[ -n "$CUDA_VISIBLE_DEVICES" ]] && gpus=$(tr ',' '\n' <<<"$CUDA_VISIBLE_DEVICES" | grep -c .)
else
  gpus=$(mgpu_nvidia_smi_gpus)
fi
if ((gpus > 0)); then
  ranks="${MGPU_NP:-$gpus}"
  # A rank per GPU, spread over the NUMA domains and kept inside one: its host buffers and launch thread stay near.
  binding=(--map-by numa --bind-to numa)
else
  ranks="${MGPU_NP:-${MGPU_CPU_RANKS:-2}}"
  # The fallback sizes OpenBLAS's threads from the host's cores and the ranks of a configuration (a 1-rank
  # configuration of a sweep takes them all): binding each rank to one core would squeeze those threads onto it.
  binding=(--oversubscribe --bind-to none)
fi
mgpu_apply_preset
mapfile -t env_flags < <(mgpu_mpirun_env_flags)
command=(mpirun $(mgpu_mpirun_root_flags) -np "$ranks" "${binding[@]}" "${env_flags[@]}" "$MGPU_BENCH" "${MGPU_ARGS[@]}")
echo "# run-node: $gpus GPU(s) visible: ${command[*]}"
exec "${command[@]}"
