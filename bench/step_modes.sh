#!/usr/bin/env bash
# Purpose: ways of running the same data-parallel step compared on RANKS GPUs (overlap orders, the sharded optimizer,
# any mgpu_bench options), whole processes alternated (mode 1, mode 2, ..., mode 1, mode 2, ...) so that drift falls
# on every mode, by default each mode's processes running one GEMM plan so that only the mode differs: per
# configuration and mode the mean step (max over ranks) of the unmarked runs of each pass, their mean and its ratio
# to the first mode, and the phases of the marked runs. Prints a Markdown table last (also OUT/table.md).
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir [RANKS=2] [RUNS=10] [PASSES=2] [CONFIGS="large:1024 large:4096"]
#        [MODES="replicated=--optimizer-sharding off;sharded=--optimizer-sharding on"] [PLAN=shared|own]
#        bash bench/step_modes.sh   (PYTHON: a python3 with h5py and numpy, default python3)
# One GPU's step kernels (--step-kernel): RANKS=1 PLAN=own CONFIGS="medium:8 medium:32 medium:64 large:8 large:32"
#   MODES="chain=--step-kernel chain --timing step;persistent=--step-kernel persistent --timing step".
# MODES: NAME=OPTIONS entries separated by ';', the first the baseline of the ratios. PLAN=shared (default): one
# tuning process per configuration and mode (2 runs) makes the plan every measured process of that mode runs
# (--gemm-plan; overlap splits the weight-gradient GEMMs by bucket, so a mode's shapes can differ); own: every
# process tunes its own, as a user's job does.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_step_modes}"
ranks="${RANKS:-2}"
runs="${RUNS:-10}"
passes="${PASSES:-2}"
configs="${CONFIGS:-large:32 large:1024 large:4096 medium:128 medium:4096}"
modes="${MODES:-replicated=--optimizer-sharding off;sharded=--optimizer-sharding on}"
plan="${PLAN:-shared}"
[[ "$plan" == shared || "$plan" == own ]] || { echo "PLAN must be shared or own, not '$plan'" >&2; exit 2; }
mkdir -p "$out"
log="$out/step_modes.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"

IFS=';' read -r -a mode_entries <<<"$modes"
mode_names=()
for entry in "${mode_entries[@]}"; do
  [[ "$entry" == *=* ]] || { echo "a MODES entry is NAME=OPTIONS, not '$entry'" >&2; exit 2; }
  mode_names+=("${entry%%=*}")
done

# bench_run FILE MODEL BATCH RUN_COUNT OPTIONS...: one mgpu_bench process of one configuration.
bench_run() {
  local file=$1 model=$2 batch=$3 run_count=$4
  shift 4
  "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$model" --batch "$batch" --gpus "$ranks" \
    --runs "$run_count" --trials 1 --output "$file" --force "$@" >>"$log" 2>&1
}

if [[ "$plan" == shared ]]; then
  for config in $configs; do
    model=${config%%:*} batch=${config##*:}
    for entry in "${mode_entries[@]}"; do
      read -r -a options <<<"${entry#*=}"
      bench_run "$out/plan_${entry%%=*}_${model}_b${batch}.h5" "$model" "$batch" 2 "${options[@]}" ||
        note "FAILED: the plan of ${entry%%=*}, $model batch $batch"
    done
  done
fi

for ((pass = 1; pass <= passes; ++pass)); do
  for config in $configs; do
    model=${config%%:*} batch=${config##*:}
    for entry in "${mode_entries[@]}"; do
      name=${entry%%=*}
      read -r -a options <<<"${entry#*=}"
      plan_options=()
      [[ "$plan" == shared ]] && plan_options=(--gemm-plan "$out/plan_${name}_${model}_b${batch}.h5")
      bench_run "$out/${name}_${model}_b${batch}_p${pass}.h5" "$model" "$batch" "$runs" "${options[@]}" \
        "${plan_options[@]}" || note "FAILED: $name (${entry#*=}), $model batch $batch, pass $pass"
    done
  done
done

"${PYTHON:-python3}" - "$out" "$passes" "$configs" "${mode_names[@]}" <<'PY' | tee "$out/table.md"
import os, sys
import h5py, numpy as np
out, passes, configs, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
PHASES = ("backward", "allreduce", "exposed_comm", "optimizer")
def figures(path):
    """Mean step of the unmarked runs; mean phases of the marked ones (each the max over ranks); None where the
    process left no finished run (or no file)."""
    try:
        with h5py.File(path, "r") as f:
            groups = list(f["configurations"].values()) if "configurations" in f else []
            done = int(groups[0].attrs.get("runs_completed", 0)) if groups else 0
            if done == 0:
                return None
            group = groups[0]
            measured = ~group["is_warmup"][:].astype(bool)
            marked = group["phases_marked"][:done].max(axis=1) == 1
            def mean(name, runs):
                values = group[name][:done].max(axis=1)[:, measured]
                return float(values[runs].mean()) if runs.any() else float("nan")
            return [mean("step_ms", ~marked)] + [mean(f"{phase}_ms", marked) for phase in PHASES]
    except (OSError, KeyError):
        return None
print("| configuration | mode | step ms, each pass | mean | ÷ " + modes[0] + " | " + " | ".join(PHASES) + " |")
print("|---|---|---|---|---|" + "---|" * len(PHASES))
for config in configs:
    model, batch = config.split(":")
    baseline = None
    for mode in modes:
        paths = [os.path.join(out, f"{mode}_{model}_b{batch}_p{p}.h5") for p in range(1, passes + 1)]
        rows = np.array([row for row in map(figures, paths) if row is not None])
        if rows.size == 0:
            print(f"| {model} {batch} | {mode} | no run finished | | | " + "| " * len(PHASES))
            continue
        means = np.nanmean(rows, axis=0)
        baseline = means[0] if baseline is None else baseline
        each = ", ".join(f"{v:.4f}" for v in rows[:, 0])
        print(f"| {model} {batch} | {mode} | {each} | {means[0]:.4f} | {means[0] / baseline:.3f} | " +
              " | ".join(f"{v:.4f}" for v in means[1:]) + " |")
PY
