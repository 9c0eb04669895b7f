#!/usr/bin/env bash
# Purpose: where one GPU's step spends its time, kernel by kernel, measured by Nsight Compute: for each cell
# (precision, model, batch, step kernel), the step's mean time from a plain run (`--timing step`), then one run of
# the same configuration under `ncu` with the plain run's GEMM plan, profiling only the run's steps (mgpu_bench brackets
# them with cudaProfilerStart/Stop; ncu starts with profiling off, so set-up's tuning and clock settling run
# unprofiled); bench/step_kernels_table.py divides by the steps profiled: one step's kernels, each with its duration,
# DRAM bytes and its DRAM and SM throughput as a share of the GPU's peak, and what bounds it. A kernel at neither
# peak is bound by its latency or its size.
# Usage (binaries built for the GPU, ncu on the PATH; from the repository root):
#   BIN_DIR=build OUT=/tmp/step_kernels bash bench/step_kernels.sh
#   CELLS="fp32:medium:8:chain bf16:large:4096:auto" BASE_BIN=/path/to/old/build ...   (cells of the old build are
#   named old/PRECISION:MODEL:BATCH:KERNEL)
# Expected duration on one H100: about 30 s a cell (a plain run and a profiled one); BUDGET_S (default 500) skips
# any cell not started by then, saying so. Every .h5, CSV and log stay under OUT; the table is OUT/step_kernels.md.
# ncu runs with --clock-control none and --cache-control none, so each kernel runs at the clocks and with the caches
# the plain run has; it serialises the kernels, so a kernel that overlaps its predecessor in the plain run (dependent
# launch) is measured whole.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_step_kernels}"
budget="${BUDGET_S:-500}"
cells="${CELLS:-fp32:medium:8:chain fp32:medium:8:persistent fp32:medium:128:auto fp32:medium:1024:auto \
fp32:medium:4096:auto fp32:large:8:auto fp32:large:128:auto tf32x3:large:1024:auto tf32x3:large:4096:auto}"
python="${PYTHON:-$(command -v python3)}"  # one with h5py
mkdir -p "$out"
log="$out/step_kernels.log"
: >"$log"
source "$root/bench/common.sh"  # NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, note()
metrics=gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__throughput.avg.pct_of_peak_sustained_elapsed
profiled_steps=5  # one run: a warm-up step and four measured ones
started=$SECONDS
status=0
for cell in $cells; do
  dir=$bin name=$cell
  if [[ $cell == old/* ]]; then
    dir="$(cd "${BASE_BIN:?BASE_BIN=directory of the old build}" && pwd)" cell=${cell#old/}
  fi
  IFS=: read -r precision model batch kernel <<<"$cell"
  tag="$(tr '/:' '__' <<<"$name")"
  if ((SECONDS - started > budget)); then note "SKIPPED (past ${budget} s): $name"; continue; fi
  note "## $name ($((SECONDS - started)) s)"
  args=(--model "$model" --batch "$batch" --precision "$precision" --trials 1 --timing step)
  [[ $kernel != auto ]] && args+=(--step-kernel "$kernel")
  "$dir/mgpu_bench" "${args[@]}" --runs 3 --steps 30 --warmup 5 --output "$out/$tag.h5" --force \
    >"$out/$tag.txt" 2>&1 || { note "FAILED ($?): plain run of $name"; status=1; continue; }
  # The step kernel the plain run's `auto` chose, named: under ncu, set-up's timing of the two could choose otherwise.
  chosen=$("$python" -c 'import h5py, sys
print(next(iter(h5py.File(sys.argv[1], "r")["configurations"].values())).attrs["step_kernel_chosen"])' "$out/$tag.h5")
  [[ -n $chosen && $kernel == auto ]] && args+=(--step-kernel "$chosen")
  timeout 150 ncu --csv --page raw --print-units base --metrics "$metrics" --graph-profiling node \
    --profile-from-start off --clock-control none --cache-control none --log-file "$out/$tag.csv" \
    "$dir/mgpu_bench" "${args[@]}" --gemm-plan "$out/$tag.h5" --runs 1 --steps $((profiled_steps - 1)) --warmup 1 \
    --output "$out/${tag}_profiled.h5" --force >>"$log" 2>&1 || { note "FAILED ($?): ncu of $name"; status=1; }
done
"$python" "$root/bench/step_kernels_table.py" "$out" "$profiled_steps" $cells >"$out/step_kernels.md" || status=1
cat "$out/step_kernels.md"
exit $status
