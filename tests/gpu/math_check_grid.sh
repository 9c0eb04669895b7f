#!/usr/bin/env bash
# Purpose: the math check (docs/measurement.md, "Math check") over a grid of the product's configurations: both
# presets, global batch 8 to 4096, on 1, 2 and 4 GPUs (as many as there are), GEMM tuning and everything else at the
# defaults; then one row per configuration (its check, each rank's relative error, the tolerance, the check's seconds,
# the GEMM candidates verified and rejected) in OUT/table.md. Each model and GPU count is one mgpu_bench sweep, so a
# refused configuration ends only its own sweep. Passes when every configuration of the grid passed its check.
# Usage: BENCH=build/mgpu_bench OUT=/tmp/math_check bash tests/gpu/math_check_grid.sh
# Knobs: MODELS (default "medium large"), BATCHES (default "8,32,128,1024,4096"), GPUS (default: 1, 2 and 4 of the
# GPUs nvidia-smi lists), EXTRA (more mgpu_bench arguments, e.g. "--precision tf32").
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench="${BENCH:-$root/build/mgpu_bench}"
out="${OUT:-/tmp/mgpu_math_check}"
mkdir -p "$out"
log="$out/math_check.log"
source "$root/bench/common.sh"
visible="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
default_gpus=""
for n in 1 2 4; do ((n <= visible)) && default_gpus+="$n "; done
status=0
for model in ${MODELS:-medium large}; do
  for n in ${GPUS:-$default_gpus}; do
    file="$out/${model}_n${n}.h5"
    # shellcheck disable=SC2086 # EXTRA is words
    "${mpirun[@]}" -np "$n" "$bench" --model "$model" --batch "${BATCHES:-8,32,128,1024,4096}" --gpus "$n" \
      --runs 1 --warmup 1 --steps 3 ${EXTRA:-} --output "$file" --force >>"$log" 2>&1 || status=1
  done
done
python3 - "$out" <<'EOF_PY' | tee "$out/table.md"
import glob, sys
import h5py
print("| configuration | math check | errors per rank | tolerance | seconds | GEMM candidates verified, rejected |")
print("|---|---|---|---|---|---|")
for path in sorted(glob.glob(sys.argv[1] + "/*.h5")):
    with h5py.File(path, "r") as f:
        for name, g in f["configurations"].items():
            a = g.attrs
            errors = ", ".join(f"{e:.2g}" for e in a["math_check_errors"])
            word = str(a["math_check"]).split(":")[0]
            print(f"| {name} | {word} | {errors} | {a['math_check_tolerance']:.2g} | {a['math_check_seconds']:.2f} |"
                  f" {a['gemm_candidates_checked']}, {a['gemm_candidates_rejected']} |")
EOF_PY
if grep -q "FAILED" "$out/table.md" || ! grep -q "passed" "$out/table.md"; then status=1; fi
exit "$status"
