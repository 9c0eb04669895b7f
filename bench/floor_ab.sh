#!/usr/bin/env bash
# Purpose: one GPU's step against the floor and against an earlier build, in one job on one GPU (issue 79): the probe
# (the floor's rates), then the old build (BASE_BIN) and the new one (BIN_DIR) in alternating processes, both orders
# (pass 1: old then new, pass 2: new then old; `--timing step`): fp32 for medium and large at batch 8 to 4096, tf32 and
# bf16 at large 1024 and 4096, the new build's tf32x3 at large 128, 1024 and 4096; the PyTorch peer (`--mode graph`,
# fused capturable Adam) at the same precisions; then bench/floor_ab_table.py's table: old, new, new ÷ old with its
# 95% interval (mgpu_analyze compare over the passes), the floor, new ÷ floor, PyTorch and the math check.
# Every .h5, the log and the table stay under OUT (results/ and floor_ab_table.md) for the archive.
# Usage (binaries of both builds built for the GPU; from the repository root):
#   BASE_BIN=/path/to/old/build BIN_DIR=build OUT=/tmp/floor_ab bash bench/floor_ab.sh
# Expected duration on one H200 or H100: about 7 minutes (probe ~20 s; each fp32 process of 16 cells ~45 s, 4 of them;
# tf32 and bf16 ~15 s a process, 8; tf32x3 ~30 s, 2; the peer ~60 s): within one 9-minute call. BUDGET_S (default
# 480) skips any step not started by then, saying so, so that the table still comes back.
# Knobs: RUNS (5), STEPS (30), WARMUP (5), PASSES (2), PEER_RUNS (3), PEER=0 (no PyTorch), BUDGET_S, PYTHON (an
# interpreter with h5py; default python3), DRY_RUN=1 (a
# rehearsal on the CPU fallback: fp32 medium 8 and 32 only, BASE_BIN defaulting to BIN_DIR, no probe, no peer, tiny
# runs; what CTest's floor_ab_dry_run runs).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
dry_run="${DRY_RUN:-0}"
if [[ "$dry_run" == 1 ]]; then base="${BASE_BIN:-$bin}"; else base="${BASE_BIN:?BASE_BIN=directory of the old build}"; fi
base="$(cd "$base" && pwd)"
out="${OUT:-/tmp/mgpu_floor_ab}"
runs="${RUNS:-5}"
steps="${STEPS:-30}"
warmup="${WARMUP:-5}"
passes="${PASSES:-2}"
peer_runs="${PEER_RUNS:-3}"
budget="${BUDGET_S:-480}"
results="$out/results"
mkdir -p "$results"
log="$out/floor_ab.log"
: >"$log"
source "$root/bench/common.sh"  # NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, note()
python="${PYTHON:-$(command -v python3)}"  # one with h5py (and PyTorch for the peer)
status=0
started=$SECONDS
# The cells: (precision, sweep arguments); tf32x3 is the new build's only.
fp32_sweep=(--sweep "medium:8,32,64,128,512,1024,2048,4096" --sweep "large:8,32,64,128,512,1024,2048,4096")
wide_sweep=(--sweep "large:1024,4096")
tf32x3_sweep=(--sweep "large:128,1024,4096")
device=()
if [[ "$dry_run" == 1 ]]; then
  fp32_sweep=(--sweep "medium:8,32")
  device=(--device cpu)
  runs=5 steps=5 warmup=1
fi
check() {  # check NAME COMMAND...: runs it with its output in the log, remembers a failure, skips it past the budget
  if ((SECONDS - started > budget)); then note "SKIPPED (past ${budget} s): $1"; return; fi
  note "## $1 ($((SECONDS - started)) s)"; shift
  "$@" >>"$log" 2>&1 || { note "FAILED ($?): $*"; status=1; }
}
# ours BUILD PRECISION PASS SWEEP...: one process of BUILD (old or new) over the sweep, into results/.
ours() {
  local build=$1 precision=$2 pass=$3; shift 3
  local dir=$bin; [[ $build == old ]] && dir=$base
  check "$build $precision, pass $pass" "$dir/mgpu_bench" "$@" --precision "$precision" "${device[@]}" \
    --timing step --runs "$runs" --steps "$steps" --warmup "$warmup" --trials 1 \
    --output "$results/${build}_${precision}_p${pass}.h5" --force
}

{ date -u; echo "new: $bin ($("$bin/mgpu_bench" --version 2>&1))"; echo "old: $base ($("$base/mgpu_bench" --version 2>&1))"
  [[ "$dry_run" == 1 ]] || { nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv; }
} >>"$log" 2>&1

# 1. The floor's rates: copy bandwidth, the best GEMM rate of each precision, a graph node.
[[ "$dry_run" == 1 ]] || check "probe" "$bin/mgpu_bench" probe --model large --batches 4096 --runs 3 \
  --output "$results/probe.h5" --force

# 2. Both builds in turn, each pass in the other order, so that a drift of the machine falls on both.
for ((pass = 1; pass <= passes; ++pass)); do
  order=(old new); ((pass % 2 == 0)) && order=(new old)
  for build in "${order[@]}"; do ours "$build" fp32 "$pass" "${fp32_sweep[@]}"; done
  if [[ "$dry_run" != 1 ]]; then
    for precision in tf32 bf16; do
      for build in "${order[@]}"; do ours "$build" "$precision" "$pass" "${wide_sweep[@]}"; done
    done
    ours new tf32x3 "$pass" "${tf32x3_sweep[@]}"
  fi
done

# 3. The PyTorch peer on the same GPU at each precision's cells (skipped without PyTorch).
if [[ "$dry_run" != 1 && "${PEER:-1}" == 1 ]] && "$python" -c 'import torch' 2>/dev/null; then
  peer=("$python" "$root/bench/peers/torch_mlp.py" --mode graph --runs "$peer_runs" --steps "$steps" --warmup "$warmup"
        --force)
  fp32_configs=()
  for model in medium large; do
    for batch in 8 32 64 128 512 1024 2048 4096; do fp32_configs+=(--config "$model:$batch"); done
  done
  check "peer fp32" "${peer[@]}" "${fp32_configs[@]}" --precision fp32 --output "$results/peer_fp32.h5"
  for precision in tf32 bf16; do
    check "peer $precision" "${peer[@]}" --config large:1024 --config large:4096 --precision "$precision" \
      --output "$results/peer_$precision.h5"
  done
elif [[ "$dry_run" != 1 && "${PEER:-1}" == 1 ]]; then
  note "peer: no PyTorch here (python3 -c 'import torch' failed): its column stays 'not run'"
fi

# 4. The table, from the files alone.
note "## table ($((SECONDS - started)) s)"
"$python" "$root/bench/floor_ab_table.py" --analyze "$bin/mgpu_analyze" "$results" >"$out/floor_ab_table.md" \
  2>>"$log" || { note "FAILED: floor_ab_table.py"; status=1; }
note "## done in $((SECONDS - started)) s"
echo; grep -h -e "^## " -e "FAILED" -e "SKIPPED" "$log" | tail -n 40
echo; cat "$out/floor_ab_table.md"
echo "=== status $status"
exit $status
