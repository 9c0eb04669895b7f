#!/usr/bin/env bash
# Purpose: the suite's whole GPU acceptance check in one run on a 2-GPU machine (< 10 minutes), most important part
# first, each part bounded by its own time limit and packed as soon as it ends (a few archives are easier to copy
# back than many files): the GPU unit tests, refusals of bad input, two identical grid sweeps for mgpu_analyze (report + compare),
# the performance figures (bench/performance.sh) and the study's grid under both presets (bench/run_study.sh).
# Usage: BIN_DIR=dir-with-mgpu_bench-and-tests OUT=dir bash tests/gpu/gpu_acceptance.sh
# Knobs: GRID_RUNS (runs per grid configuration, default 10), PERF_RUNS (default 20), SKIP="tests grid perf study"
# (parts to leave out).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_acceptance}"
skip=" ${SKIP:-} "
mkdir -p "$out"
log="$out/acceptance.log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
status=0
started=$SECONDS
check() {  # check SECONDS NAME COMMAND...: runs it under a time limit with its output in the log
  local limit=$1 name=$2; shift 2
  note "## $name ($((SECONDS - started)) s)"
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1 || { note "FAILED ($?): $name"; status=1; }
}
wants() { [[ "$skip" != *" $1 "* ]]; }

{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv; } >>"$log" 2>&1

# 1. Correctness on the GPU: every path (graph, overlap, precisions, accumulate) against the float64 reference, and
#    2 GPUs against 1 on the same global batches.
if wants tests; then
  check 120 "CUDA unit tests" "$bin/test_cuda_mlp"
  check 30 "GPU description tests" "$bin/test_gpu_devices"
  check 60 "skinny GEMM tests" "$bin/test_skinny_gemm"
  check 120 "2 GPUs vs 1 GPU weights" "${mpirun[@]}" -np 2 "$bin/test_cuda_data_parallel" --gtest_color=no
  # More ranks than GPUs, and a batch that cannot fit, must be refused with one line and leave no file.
  note "## refusals (must fail)"
  if "${mpirun[@]}" --oversubscribe -np 3 "$bin/mgpu_bench" --device cuda --batch 30 --output "$out/bad.h5" >>"$log" 2>&1; then
    note "FAILED: accepted 3 ranks on 2 GPUs"; status=1
  fi
  if "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model large --batch 16777216 --output "$out/huge.h5" >>"$log" 2>&1; then
    note "FAILED: accepted a batch that cannot fit"; status=1
  fi
  [[ -e "$out/bad.h5" || -e "$out/huge.h5" ]] && { note "FAILED: a refused run left a file"; status=1; }
fi

# 2. Real data for mgpu_analyze: the same grid twice (report on one, compare the two: repeatability).
if wants grid; then
  mkdir -p "$out/grid"
  for side in a b; do
    check 150 "grid sweep $side" "${mpirun[@]}" -np 2 "$bin/mgpu_bench" --model medium,large --batch 32,128 --gpus 1,2 \
      --runs "${GRID_RUNS:-10}" --trials 1 --output "$out/grid/grid-$side.h5" --force
  done
  tar -C "$out" -czf "$out/grid.tar.gz" grid && rm -rf "$out/grid"
fi

# 3. The performance figures of docs/performance.md (probe, all-reduce sweep, targets, PyTorch peer, table).
if wants perf; then
  check 300 "performance.sh" env BIN_DIR="$bin" OUT="$out/perf" RUNS="${PERF_RUNS:-20}" bash "$root/bench/performance.sh"
fi

# 4. The study's grid from its study file under both environment presets, with wall times.
if wants study; then
  check 240 "run_study.sh" env MGPU_BENCH="$bin/mgpu_bench" bash "$root/bench/run_study.sh" "$out/study"
  grep -h "s wall" "$log" | tail -n 2
  tar -C "$out" -czf "$out/study.tar.gz" study && rm -rf "$out/study"
fi

echo "=== test summary"; grep -hE "^\[  (PASSED|FAILED|SKIPPED) " "$log"
echo "=== refused"; grep -h "mgpu_bench: error" "$log" | head -n 2
echo "=== parts"; grep -h -e "^## " -e "FAILED" -e "s wall" "$log"
[[ -f "$out/perf/performance_table.md" ]] && { echo "=== performance"; cat "$out/perf/performance_table.md"; }
echo "=== status $status after $((SECONDS - started)) s"
exit $status
