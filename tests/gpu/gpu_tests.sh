#!/usr/bin/env bash
# Purpose: the GPU tests on 1, 2 and 4 GPUs of one machine, and whether the product trains the same model on each GPU
# count: the unit tests of our kernels, the model, the loss array, the GEMM tuner's verification and the trainer on
# one GPU; the NCCL communicator's test on 2 ranks; the data-parallel test on 2 ranks and, with 4 GPUs, on 4
# (MGPU_GEMM_REPORT on, so any candidate that verification rejected is named); the persistent step kernel on one
# GPU; then mgpu_bench --model large --batch 64 on 1, 2 (and 4) GPUs, whose per-step losses must agree; and the math
# check refusing a wrong GEMM (MGPU_FAULT_CORRUPT_GEMM=1) on one GPU. What the machine has too few GPUs for is a row "not run: needs N GPUs", and
# passes: one GPU runs every 1-GPU row. One table (what ran, ranks, tests, failed, skipped, seconds, result) in
# OUT/table.md; exit 1 when a row fails, or when nothing could run (no GPU).
# Usage: BIN_DIR=build OUT=/tmp/gpu_tests bash tests/gpu/gpu_tests.sh
# Knobs: GPUS (default: the GPUs nvidia-smi lists), LIMIT (seconds per row, default 300).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_gpu_tests}"
limit="${LIMIT:-300}"
mkdir -p "$out"
log="$out/gpu_tests.log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
gpus="${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}"
tool() { local d; for d in "$bin" "$bin/tests"; do [[ -x "$d/$1" ]] && { echo "$d/$1"; return; }; done; }
rows=()
status=0
ran=0

# add_row NAME RANKS TESTS FAILED SKIPPED SECONDS RESULT: one line of the table, printed as it is made.
add_row() {
  rows+=("$(printf '| %-34s | %5s | %5s | %6s | %7s | %7s | %s |' "$@")")
  echo "${rows[-1]}"
}

# needs N NAME RANKS: true when the machine has N GPUs; else the row says so and the caller skips the part.
needs() {
  ((gpus >= $1)) && { ran=1; return 0; }
  add_row "$2" "$3" "-" "-" "-" 0 "not run: needs $1 GPU$( (($1 > 1)) && echo s)"
  return 1
}

# row NAME RANKS FILE RC SECONDS: the gtest counts of FILE's output.
row() {
  local name=$1 ranks=$2 file=$3 rc=$4 seconds=$5 tests failed skipped result
  tests=$(grep -oP '^\[==========\] \K[0-9]+(?= tests? from .* ran)' "$file" | tail -n 1)
  failed=$(grep -oP '^\[  FAILED  \] \K[0-9]+(?= tests?,)' "$file" | tail -n 1)
  skipped=$(grep -oP '^\[  SKIPPED \] \K[0-9]+(?= tests?[,.])' "$file" | tail -n 1)
  result="ok"
  if ((rc != 0)) || [[ -z "$tests" || "${failed:-0}" != 0 || "${skipped:-0}" != 0 ]]; then
    result="FAIL (exit $rc)"; status=1
  fi
  add_row "$name" "$ranks" "${tests:-0}" "${failed:-0}" "${skipped:-0}" "$seconds" "$result"
}

# gtest NAME RANKS VISIBLE COMMAND...: one test binary under the row limit, its output kept in OUT.
gtest() {
  local name=$1 ranks=$2 visible=$3 start=$SECONDS rc; shift 3
  local file="$out/${name// /_}_n${ranks}.txt"
  CUDA_VISIBLE_DEVICES="$visible" MGPU_GEMM_REPORT=1 timeout --kill-after=10 "$limit" "$@" --gtest_color=no \
    </dev/null >"$file" 2>&1
  rc=$?
  row "$name" "$ranks" "$file" "$rc" $((SECONDS - start))
  grep -h "rejected" "$file" | sort | uniq -c | head -n 20 >>"$log"
}

{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } >>"$log" 2>&1
for t in test_cuda_mlp test_skinny_gemm test_relu_dropout_backward_bias test_generate_batch test_gpu_devices \
  test_loss_buffer test_tuned_gemm test_gpu_clocks test_hold_sms test_tf32_split_kernels test_weight_gradient_adam; do
  needs 1 "$t" 1 && gtest "$t" 1 0 "$(tool "$t")"
done
needs 1 test_cuda_trainer 1 && gtest test_cuda_trainer 1 0 "${mpirun[@]}" -np 1 "$(tool test_cuda_trainer)"
needs 1 test_persistent_step 1 && gtest test_persistent_step 1 0 "${mpirun[@]}" -np 1 "$(tool test_persistent_step)"
needs 2 test_nccl_communicator 2 &&
  gtest test_nccl_communicator 2 0,1 "${mpirun[@]}" -np 2 "$(tool test_nccl_communicator)"
needs 2 test_cuda_data_parallel 2 &&
  gtest test_cuda_data_parallel 2 0,1 "${mpirun[@]}" -np 2 "$(tool test_cuda_data_parallel)"
needs 4 test_cuda_data_parallel 4 &&
  gtest test_cuda_data_parallel 4 0,1,2,3 "${mpirun[@]}" -np 4 "$(tool test_cuda_data_parallel)"

# The product: the same global batches on 1, 2 (and 4) GPUs, with its default settings, must train alike: the losses
# of the first two steps (before and after the first update) of every GPU count within 1e-5 (relative) of the 1-GPU
# ones, since the split changes only the order of fp32 sums. Later steps are printed, not judged: once a ReLU
# pre-activation within fp32 rounding of zero is decided differently, correct trajectories part by lr-sized Adam
# steps (tests/train/test_cuda_data_parallel.cpp measures how far).
counts="1,2"; ((gpus >= 4)) && counts="1,2,4"
if needs 2 "mgpu_bench large 64, losses" "$counts"; then
  ranks="${counts##*,}"
  start=$SECONDS
  timeout --kill-after=10 "$limit" "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model large --batch 64 \
    --gpus "$counts" --runs 2 --trials 1 --warmup 0 --steps 10 --output "$out/losses.h5" --force >"$out/losses.txt" 2>&1
  rc=$?
  prc=1
  # Only a job that wrote its file has losses to compare; else the row names the job's own last line.
  if ((rc == 0)) && [[ -f "$out/losses.h5" ]]; then
    python3 - "$out/losses.h5" >>"$out/losses.txt" 2>&1 <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    groups = {g: f["configurations"][g] for g in f["configurations"]}
    one = next(g for name, g in groups.items() if "_n1_" in name)["loss"][0]
    worst = 0.0
    for name, g in sorted(groups.items()):
        loss = g["loss"][0]
        first_two = np.max(np.abs(loss[:2] - one[:2]) / np.abs(one[:2]))
        worst = max(worst, first_two)
        later = np.max(np.abs(loss - one) / np.abs(one))
        print(f"{name}: run 0 losses {np.array2string(loss[:6], precision=7)} ...; relative difference from 1 GPU "
              f"{first_two:.3g} over the first two steps, {later:.3g} over all")
    print(f"worst over the first two steps {worst:.3g}")
    sys.exit(0 if worst <= 1e-5 else 1)
PY
    prc=$?
  fi
  result="ok"; ((rc != 0 || prc != 0)) && { result="FAIL (exit $rc, losses $prc)"; status=1; }
  add_row "mgpu_bench large 64, losses" "$counts" "-" "-" "-" $((SECONDS - start)) \
    "$result: $(tail -n 1 "$out/losses.txt")"
fi

# The math check's fault hook on one GPU: every tuned GEMM's first column zeroed after verification chose it must be
# refused before any run, with one line and status 1 (docs/reliability.md; the CPU fallback's case is in CI).
if needs 1 "mgpu_bench, a wrong GEMM refused" 1; then
  start=$SECONDS
  CUDA_VISIBLE_DEVICES=0 MGPU_FAULT_CORRUPT_GEMM=1 timeout --kill-after=10 "$limit" "${mpirun[@]}" \
    -x MGPU_FAULT_CORRUPT_GEMM -np 1 "$bin/mgpu_bench" --model large --batch 32 --gpus 1 --output "$out/fault.h5" \
    --force >"$out/fault.txt" 2>&1
  rc=$?
  refusal=$(grep -m 1 "the math check failed" "$out/fault.txt")
  result="ok: $refusal"
  ((rc != 1)) || [[ -z "$refusal" ]] && { result="FAIL (exit $rc, expected 1 and the refusal)"; status=1; }
  add_row "mgpu_bench, a wrong GEMM refused" 1 "-" "-" "-" $((SECONDS - start)) "$result"
fi

{
  echo "| what ran | ranks | tests | failed | skipped | seconds | result |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$out/table.md"
((ran)) || { echo "gpu_tests.sh: no GPU (GPUS=$gpus): nothing could run"; status=1; }
exit "$status"
