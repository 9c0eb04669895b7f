#!/usr/bin/env bash
# Purpose: the timing-overhead table of docs/measurement.md ("Timing") on RANKS GPUs (1 or 2): for both presets at
# global batch 8, 32, 128, 1024 and 4096, the default run's step time (--timing interleaved: its runs without marks
# inside the step) against the untimed reference (--timing none: no mark inside any step), the same work (the batch
# generation timed alone and subtracted in both), as overhead = default / untimed - 1; beside it the step of the
# default's phase-marked runs (what marking every phase would have cost). Whether the modes give the same N-GPU
# speedups is bench/timing_speedups.sh's table. Prints a Markdown table last. Pass: every overhead within +-2%; exits 1
# otherwise.
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir RANKS=1 RUNS=10 bash bench/timing_overhead.sh
# Knobs for a rehearsal (the table of the docs uses the defaults): MODELS, BATCHES, WARMUP (10), STEPS (100),
# BENCH_ARGS (more mgpu_bench options, e.g. "--device cpu").
# (as its own copy beside common.sh, e.g. both in one folder carried to a GPU machine, it runs the same way)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${BIN_DIR:-$here/../build}"
out="${OUT:-/tmp/mgpu_timing_overhead}"
ranks="${RANKS:-1}"
runs="${RUNS:-10}"
limit_percent="${LIMIT_PERCENT:-2}"
mkdir -p "$out"
log="$out/timing_overhead.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$here/common.sh"
mpirun+=(--bind-to none)
# A rehearsal may ask for fewer (BATCHES=8,32 MODELS=medium); the table of the docs uses these.
batches="${BATCHES:-8,32,128,1024,4096}"
models="${MODELS:-medium,large}"
warmup="${WARMUP:-10}"
steps="${STEPS:-100}"
read -r -a bench_args <<<"${BENCH_ARGS:-}"
rm -f "$out/failures.txt"

# sweep NAME ARGS...: every preset and batch in one process (the CUDA context is reset between configurations).
sweep() {
  local name=$1
  shift
  "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$models" --batch "$batches" --warmup "$warmup" \
    --steps "$steps" --runs "$runs" --trials 1 "${bench_args[@]}" --force --output "$out/$name.h5" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  note "# $name: rc=$rc ($*)"
  ((rc == 0)) || { tail -n 5 "$out/$name.txt" | tee -a "$log"; exit 1; }
}
# The default first and the untimed reference second, as a user would run them.
sweep default
sweep untimed --timing none

# step_ms NAME: "configuration step_ms" from the sweep's closing table (the throughput runs' mean step).
step_ms() { awk '/^# configuration/ {t = 1; next} t && NF >= 8 && $1 !~ /^#/ {print $1, $7}' "$out/$1.txt"; }
# The default's phase-marked runs' step, in the order of the configurations.
marked_ms() { grep -oP 'phases from the [0-9]+ phase-marked runs, step \K[0-9.]+' "$out/default.txt"; }
failed=0
{
  echo
  echo "## Timing overhead on $ranks GPU(s): default (--timing interleaved) vs untimed (--timing none)"
  echo
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1), git $("$bin/mgpu_bench" --version | awk '{gsub(/\)/, ""); print $NF}'), --warmup $warmup --steps $steps --runs $runs${BENCH_ARGS:+ $BENCH_ARGS}; ms per step (max over ranks), mean over the throughput runs"
  echo
  echo "| configuration | default | untimed | overhead | phase-marked runs' step |"
  echo "|---|---|---|---|---|"
} >"$out/table.md"
paste -d' ' <(step_ms default) <(step_ms untimed | awk '{print $2}') <(
  # The marked-run step for every configuration, in sweep order.
  marked_ms
) | while read -r name default untimed marked; do
  overhead=$(awk -v d="$default" -v u="$untimed" 'BEGIN {printf "%+.2f%%", 100 * (d / u - 1)}')
  marked_overhead=$(awk -v m="$marked" -v u="$untimed" 'BEGIN {printf "%.4f (%+.1f%%)", m, 100 * (m / u - 1)}')
  within=$(awk -v d="$default" -v u="$untimed" -v l="$limit_percent" 'BEGIN {print (100 * (d / u - 1) <= l && 100 * (d / u - 1) >= -l) ? 1 : 0}')
  ((within)) || echo "FAIL $name: overhead $overhead beyond +-$limit_percent%" >>"$out/failures.txt"
  echo "| $name | $default | $untimed | $overhead | $marked_overhead |" >>"$out/table.md"
done

[[ -s "$out/failures.txt" ]] && failed=1 && cat "$out/failures.txt" | tee -a "$log"
echo "# result: $([[ $failed == 0 ]] && echo PASS || echo FAIL)" >>"$out/table.md"
cat "$out/table.md" | tee -a "$log"
exit "$failed"
