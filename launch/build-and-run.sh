#!/usr/bin/env bash
# Purpose: the README's first command: install what is missing, build, and run the main job, one rank per GPU
# (or 2 CPU ranks of the fallback when no GPU is visible). Extra arguments go to mgpu_bench.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/launch/install-deps.sh"
"$root/launch/build.sh"

gpus=0
if command -v nvidia-smi >/dev/null 2>&1; then gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); fi
ranks=$(( gpus > 0 ? gpus : 2 ))
mpirun_flags=(-np "$ranks")
if [[ $EUID -eq 0 ]]; then mpirun_flags+=(--allow-run-as-root); fi
# Containers often lack the cross-memory attach Open MPI's shared-memory transport tries first.
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
# Open MPI gives rank 0 a pseudo-terminal even when this script's output goes to a file: redraw the progress line in
# place only when it really is a terminal (src/sweep_progress.hpp).
[[ -t 1 ]] || export MGPU_PROGRESS=${MGPU_PROGRESS:-plain}
# The main job (the study's large model, global batch 32) unless arguments say otherwise; a new, time-stamped
# results file unless --output is given, so earlier results are never overwritten.
args=("$@")
(( ${#args[@]} )) || args=(--model large --batch 32)
[[ " ${args[*]} " == *" --output "* || " ${args[*]} " == *" --output="* ]] ||
  args+=(--output "mgpu_bench_$(date -u +%Y%m%dT%H%M%SZ).h5")
echo "build-and-run: $gpus GPU(s) visible; mpirun ${mpirun_flags[*]} mgpu_bench ${args[*]}"
exec mpirun "${mpirun_flags[@]}" "$root/build/mgpu_bench" "${args[@]}"
