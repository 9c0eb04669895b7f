#!/usr/bin/env bash
# Purpose: the README's first command: install what is missing, build, and run the main job, one rank per GPU
# (or 2 CPU ranks of the fallback when no GPU is visible). Extra arguments go to mgpu_bench.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/launch/common.sh"
"$root/launch/install-deps.sh"
# The programs only: the test suite and its packages are tests/build-and-test.sh's.
"$root/launch/build.sh" -DMGPU_BUILD_TESTS=OFF

gpus=$(mgpu_nvidia_smi_gpus)
ranks=$(( gpus > 0 ? gpus : 2 ))
# NVLink multicast off, for machines where NVLink SHARP is unavailable, as every launcher of launch/ sets it
# (mgpu_apply_preset); -x carries it to every rank.
export NCCL_NVLS_ENABLE=0
mpirun_flags=(-np "$ranks" $(mgpu_mpirun_root_flags) -x NCCL_NVLS_ENABLE)
mgpu_default_shared_memory_transport
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
# The progress goes to stderr, a pipe under Open MPI whatever this script's is: redraw the progress line in place
# when this script's stderr is a terminal (src/platform/console_line.hpp).
if [[ -t 2 ]]; then export MGPU_PROGRESS=${MGPU_PROGRESS:-line}; else export MGPU_PROGRESS=${MGPU_PROGRESS:-plain}; fi
# The main job (the study's large model, global batch 32) unless arguments say otherwise; a new, time-stamped
# results file unless --output is given, so earlier results are never overwritten.
args=("$@")
(( ${#args[@]} )) || args=(--model large --batch 32)
[[ " ${args[*]} " == *" --output "* || " ${args[*]} " == *" --output="* ]] ||
  args+=(--output "mgpu_bench_$(date -u +%Y%m%dT%H%M%SZ).h5")
echo "build-and-run: $gpus GPU(s) visible; mpirun ${mpirun_flags[*]} mgpu_bench ${args[*]}"
exec mpirun "${mpirun_flags[@]}" "$root/build/mgpu_bench" "${args[@]}"
