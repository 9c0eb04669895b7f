#!/usr/bin/env bash
# Purpose: the 1-GPU validation of `mgpu_analyze predict` (docs/prediction.md, "Validation on one GPU"), in one device
# call of about 1 minute on one GPU: the hardware probe (the step's own units included) at every batch of the grid
# (so each term is a measurement, not an interpolation), a separately measured grid with default settings (medium
# and large, global batch 8, 32, 128, 1024, 4096, 1 GPU, 10 runs), then `mgpu_analyze predict --check`, whose validation table is
# printed last with PASS or FAIL against the target: median |step error| <= 5% and worst <= 15%.
# Usage (from the repository root, binaries in BIN_DIR, results to OUT):
#   BIN_DIR=build OUT=/tmp/predict_check bash bench/predict_check.sh
# Knobs: RUNS (runs per configuration of the grid, default 10), RANKS (default 1: the grid on 1 GPU; N > 1: the grid
# from N ranks), GPU_COUNTS (the grid's GPU counts, default 1,N; 1,2,4 with RANKS=4), each count above 1 with an
# all-reduce sweep of its own ranks beside the probe for its all-reduce term, GRID_OPTIONS (more mgpu_bench options
# for the grid, e.g. "--optimizer-sharding on": the check then predicts that mode).
# Exit status 0 on PASS, 1 on FAIL or a failed step.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
bin="${BIN_DIR:-$root/build}" out="${OUT:-/tmp/mgpu_predict_check}"
log="$out/predict_check.log"
mkdir -p "$out" && : >"$log"
started=$SECONDS
step() {  # step NAME COMMAND...: runs it with its output in the log; a failure ends the script
  note "## $1 ($((SECONDS - started)) s)"; shift
  "$@" >>"$log" 2>&1 || { note "FAILED ($?): $*  (see $log)"; exit 1; }
}
ranks="${RANKS:-1}"
grid=8,32,128,1024,4096
gpus=1
((ranks > 1)) && gpus="1,$ranks"
((ranks == 4)) && gpus="1,2,4"
gpus="${GPU_COUNTS:-$gpus}"
# Every per-GPU batch of the grid on every GPU count (8 / N too), so that no GEMM term is an interpolation.
probe_batches=$({
  printf '%s\n' 8 16 32 64 128 256 512 1024 2048 4096
  for b in ${grid//,/ }; do for n in ${gpus//,/ }; do echo $((b / n)); done; done
} | sort -nu | paste -sd,)
rm -f "$out/probe.h5" "$out/grid.h5"
step "hardware probe" "$bin/mgpu_bench" probe --model medium,large --batches "$probe_batches" --output "$out/probe.h5"
allreduce=()
for n in ${gpus//,/ }; do
  ((n > 1)) || continue
  # The measured all-reduce at this rank count, a file each (a file holds one /allreduce group).
  rm -f "$out/allreduce_n$n.h5"
  step "all-reduce sweep, $n ranks" "${mpirun[@]}" -np "$n" "$bin/mgpu_bench" allreduce --output "$out/allreduce_n$n.h5"
  allreduce+=(--allreduce "$out/allreduce_n$n.h5")
done
read -r -a grid_options <<<"${GRID_OPTIONS:-}"
step "measured grid" "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model medium,large --batch "$grid" --gpus "$gpus" \
  --runs "${RUNS:-10}" --trials 1 "${grid_options[@]}" --output "$out/grid.h5"
note "## prediction and check ($((SECONDS - started)) s)"
for format in json markdown; do
  "$bin/mgpu_analyze" predict --probe "$out/probe.h5" "${allreduce[@]}" --check "$out/grid.h5" --format "$format" \
    >"$out/check.$format" 2>>"$log" || { note "FAILED: mgpu_analyze predict --format $format (see $log)"; exit 1; }
done
note "## done in $((SECONDS - started)) s; files in $out"
cat "$out/check.markdown"
# The verdict from the JSON's per-configuration errors (python3 is on every GPU machine).
python3 - "$out/check.json" <<'PY'
import json, statistics, sys
rows = json.load(open(sys.argv[1]))["tables"]["check"]["rows"]
errors = [abs(r["step_error_percent"]) for r in rows]
median, worst = statistics.median(errors), max(errors)
ok = median <= 5 and worst <= 15
print(f"step |error|: median {median:.1f}% (target <= 5%), worst {worst:.1f}% (target <= 15%) over {len(errors)} "
      f"configurations: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
