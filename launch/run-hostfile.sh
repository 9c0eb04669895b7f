#!/usr/bin/env bash
# Purpose: mgpu_bench across the hosts of an Open MPI hostfile (hostfiles/), one rank per slot (give each host as many
# slots as GPUs), ranks filled host by host so ranks 0..k-1 of a k-GPU configuration share as few hosts as possible.
# Usage: launch/run-hostfile.sh HOSTFILE [--preset NAME] [--np N] [--] MGPU_BENCH_ARGS...
#   e.g. launch/run-hostfile.sh hostfiles/localhost --preset nvlink-default --config bench/smoke.ini --device cpu
#   --np: ranks (default: the hostfile's slots). The preset's variables are forwarded to every host with -x.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
(($# >= 1)) || mgpu_die "usage: $0 HOSTFILE [--preset NAME] [--np N] [--] MGPU_BENCH_ARGS..."
hostfile="$1"; shift
[[ -f "$hostfile" ]] || mgpu_die "hostfile '$hostfile' does not exist"
mgpu_take_preset_option "$@"
mgpu_require_binary

# Slots: the sum of slots=N over the hostfile's host lines (a host without slots= counts 1).
slots=$(awk '!/^[[:space:]]*(#|$)/ { n = 1; for (i = 2; i <= NF; i++) if ($i ~ /^slots=/) { split($i, s, "="); n = s[2] } total += n } END { print total + 0 }' "$hostfile")
((slots > 0)) || mgpu_die "hostfile '$hostfile' names no host"
ranks="${MGPU_NP:-$slots}"
mgpu_apply_preset
mapfile -t env_flags < <(mgpu_mpirun_env_flags)
# --map-by slot fills each host's slots before the next host; --bind-to none leaves placement to the OS, which is
# right for both one rank per GPU and the CPU fallback on hosts of unknown shape.
command=(mpirun $(mgpu_mpirun_root_flags) --hostfile "$hostfile" -np "$ranks" --map-by slot --bind-to none
  "${env_flags[@]}" "$MGPU_BENCH" "${MGPU_ARGS[@]}")
echo "# run-hostfile: ${command[*]}"
exec "${command[@]}"
