#!/usr/bin/env bash
# Purpose: whether the --timing modes give the same N-GPU speedup (docs/measurement.md, "The default timing"): per
# pass, one process per mode (interleaved, the default; step; events; none), each measuring the cells on 1 GPU and on
# RANKS, whole processes alternated mode after mode, pass after pass; then bench/timing_speedup_table.py prints per
# cell each mode's speedup over the passes with mgpu_analyze's 95% interval (each pass a trial: a process is the unit
# of replication) and its ratio to the default's. Exits 1 when a mode moves a speedup beyond the verdict's minimum
# effect, judged on the intervals' ends.
# Usage: BIN_DIR=build OUT=/tmp/timing_speedups RANKS=2 bash bench/timing_speedups.sh
# Knobs: CELLS ("medium:128,1024 large:128,4096"), MODES ("interleaved step events none"), PASSES (3), RUNS (10),
# EXTRA (more mgpu_bench options), DEVICE=cpu (a dry run on the CPU fallback).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_timing_speedups}"
ranks="${RANKS:-2}"
cells="${CELLS:-medium:128,1024 large:128,4096}"
modes="${MODES:-interleaved step events none}"
passes="${PASSES:-3}"
runs="${RUNS:-10}"
read -r -a extra <<<"${EXTRA:-}"
[[ "${DEVICE:-auto}" == cpu ]] && extra+=(--device cpu)
mkdir -p "$out"
log="$out/timing_speedups.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
sweeps=()
for cell in $cells; do sweeps+=(--sweep "$cell"); done

status=0
for ((pass = 1; pass <= passes; ++pass)); do
  for mode in $modes; do
    file="$out/timing_${mode}_p${pass}.h5"
    note "pass $pass: --timing $mode, $cells on 1 and $ranks GPUs"
    if ! "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" "${sweeps[@]}" --gpus "1,$ranks" --timing "$mode" --trials 1 \
      --runs "$runs" "${extra[@]}" --output "$file" --force >>"$log" 2>&1; then
      note "FAILED: --timing $mode, pass $pass"
      status=1
    fi
  done
done
python3 "$root/bench/timing_speedup_table.py" --analyze "$bin/mgpu_analyze" --modes "$modes" --passes "$passes" "$out" |
  tee "$out/table.md"
table_status=${PIPESTATUS[0]}
exit $((status | table_status))
