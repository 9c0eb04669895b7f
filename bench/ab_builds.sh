#!/usr/bin/env bash
# Purpose: an A/B of two builds' step times on one machine: the same configurations run by build A and build B in
# alternation (A B A B ...), so drift in clocks or temperature falls on both; prints each pass and a Markdown table of
# the mean step (max over ranks) per configuration and build, with B's change against A.
# Usage: A=dir-with-mgpu_bench B=dir-with-mgpu_bench OUT=dir [RANKS=1] [RUNS=10] [PASSES=2]
#        [CONFIGS="large:32 medium:64"] [FLAGS="--timing step"] bash bench/ab_builds.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
a="${A:?A=directory holding the mgpu_bench of build A}"
b="${B:?B=directory holding the mgpu_bench of build B}"
out="${OUT:-/tmp/mgpu_ab}"
ranks="${RANKS:-1}"
runs="${RUNS:-10}"
passes="${PASSES:-2}"
configs="${CONFIGS:-large:32 medium:64}"
read -r -a flags <<<"${FLAGS:---timing step}"
mkdir -p "$out"
log="$out/ab_builds.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
python=$(command -v python3)

for ((pass = 1; pass <= passes; ++pass)); do
  for config in $configs; do
    model=${config%%:*} batch=${config##*:}
    for side in A B; do
      dir=$a; [[ $side == B ]] && dir=$b
      file="$out/${side}_${model}_b${batch}_p${pass}.h5"
      "${mpirun[@]}" -np "$ranks" "$dir/mgpu_bench" --model "$model" --batch "$batch" --runs "$runs" --trials 1 "${flags[@]}" \
        --output "$file" --force >>"$log" 2>&1 || note "FAILED: build $side $model b$batch pass $pass"
    done
  done
done

# Mean over runs of each run's mean step (max over ranks, warm-up excluded), per file; then the table.
"$python" - "$out" "$passes" "$configs" <<'PY'
import glob, os, sys
import h5py, numpy as np
out, passes, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def mean_step(path):
    with h5py.File(path, "r") as f:
        group = next(iter(f["configurations"].values()))
        step = group["step_ms"][: int(group.attrs["runs_completed"])]  # [runs, ranks, steps]
        measured = ~group["is_warmup"][:].astype(bool)
        return float(step.max(axis=1)[:, measured].mean())
print("| configuration | " + " | ".join(f"A pass {p}" for p in range(1, passes + 1)) + " | " +
      " | ".join(f"B pass {p}" for p in range(1, passes + 1)) + " | B / A |")
print("|---" * (2 * passes + 2) + "|")
for config in configs:
    model, batch = config.split(":")
    cells, means = [], {}
    for side in "AB":
        values = []
        for p in range(1, passes + 1):
            path = os.path.join(out, f"{side}_{model}_b{batch}_p{p}.h5")
            values.append(mean_step(path) if os.path.exists(path) else float("nan"))
        means[side] = np.nanmean(values)
        cells += [f"{v:.4f}" for v in values]
    print(f"| {model} b{batch} | " + " | ".join(cells) + f" | {means['B'] / means['A']:.4f} |")
PY
