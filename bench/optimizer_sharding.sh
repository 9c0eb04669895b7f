#!/usr/bin/env bash
# Purpose: the sharded optimizer (--optimizer-sharding on, ZeRO-1) against every rank updating everything, on RANKS
# GPUs, whole processes alternated (off on off on ...) so that drift falls on both: per configuration the mean step
# (max over ranks) of each mode's unmarked runs, the optimizer and all-reduce phases of its marked runs, and on / off.
# Prints a Markdown table last (also OUT/table.md).
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir [RANKS=2] [RUNS=10] [PASSES=2] [CONFIGS="large:1024 large:4096"]
#        bash bench/optimizer_sharding.sh   (PYTHON: a python3 with h5py and numpy, default python3)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_optimizer_sharding}"
ranks="${RANKS:-2}"
runs="${RUNS:-10}"
passes="${PASSES:-2}"
configs="${CONFIGS:-large:32 large:1024 large:4096 medium:128 medium:4096}"
mkdir -p "$out"
log="$out/optimizer_sharding.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"

for ((pass = 1; pass <= passes; ++pass)); do
  for config in $configs; do
    model=${config%%:*} batch=${config##*:}
    for mode in off on; do
      file="$out/${mode}_${model}_b${batch}_p${pass}.h5"
      "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$model" --batch "$batch" --gpus "$ranks" --runs "$runs" \
        --trials 1 --optimizer-sharding "$mode" --output "$file" --force >>"$log" 2>&1 ||
        note "FAILED: --optimizer-sharding $mode, $model batch $batch, pass $pass"
    done
  done
done

"${PYTHON:-python3}" - "$out" "$passes" "$configs" <<'PY' | tee "$out/table.md"
import os, sys
import h5py, numpy as np
out, passes, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def figures(path):
    """Mean step of the unmarked runs; mean optimizer and all-reduce phases of the marked ones (max over ranks)."""
    with h5py.File(path, "r") as f:
        group = next(iter(f["configurations"].values()))
        done = int(group.attrs["runs_completed"])
        measured = ~group["is_warmup"][:].astype(bool)
        marked = group["phases_marked"][:done].max(axis=1) == 1
        def mean(name, runs):
            values = group[name][:done].max(axis=1)[:, measured]
            return float(values[runs].mean()) if runs.any() else float("nan")
        return mean("step_ms", ~marked), mean("optimizer_ms", marked), mean("allreduce_ms", marked)
print("| configuration | step off (ms) | step on (ms) | on / off | optimizer off | optimizer on | all-reduce off | all-reduce on |")
print("|---|---|---|---|---|---|---|---|")
for config in configs:
    model, batch = config.split(":")
    table = {}
    for mode in ("off", "on"):
        rows = [figures(os.path.join(out, f"{mode}_{model}_b{batch}_p{p}.h5")) for p in range(1, passes + 1)
                if os.path.exists(os.path.join(out, f"{mode}_{model}_b{batch}_p{p}.h5"))]
        table[mode] = np.nanmean(np.array(rows), axis=0) if rows else np.full(3, np.nan)
    off, on = table["off"], table["on"]
    print(f"| {model} {batch} | {off[0]:.4f} | {on[0]:.4f} | {on[0] / off[0]:.3f} | {off[1]:.4f} | {on[1]:.4f} | "
          f"{off[2]:.4f} | {on[2]:.4f} |")
PY
