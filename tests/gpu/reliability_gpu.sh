#!/usr/bin/env bash
# Purpose: the watchdog's GPU check on one GPU (docs/reliability.md), in about 3 minutes: a rank blocked in a CUDA wait
# (a kernel made to spin through the MGPU_FAULT_SPIN_KERNEL_RUN fault-injection hook) is stopped within --timeout +
# 10 s with one line, its completed runs kept and --resume completing them; and a healthy 50-run default job of each
# preset (`--model medium --runs 50`, `--model large --runs 50`, default --timeout) is never stopped by the watchdog;
# and on 2 and 4 GPUs, where the machine has them, the start-up fault matrix (tests/end_to_end/startup_faults_test.sh:
# rank 0 and the last rank stopped at fork, in MPI start, in set-up, in the first run and 3 s after the launch).
# Prints a summary table last; exits 1 when a check failed.
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir bash tests/gpu/reliability_gpu.sh
# Knobs: SPIN_TIMEOUT (--timeout of the spinning job, default 10); CHECKS (default "spin healthy startup");
# STARTUP_TIMEOUT (--timeout of the start-up cases, default 10); STARTUP_GPUS (default "2 4"); STARTUP_POINTS (default
# "fork mpi-start setup first-run after:3").
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_reliability}"
mkdir -p "$out"
log="$out/reliability.log"
: > "$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
spin_timeout=${SPIN_TIMEOUT:-10}
rows=()
status=0

# attribute FILE NAME: an attribute of the file's only configuration, read with h5py.
attribute() {
  python3 - "$1" "$2" <<'EOF' 2>>"$log"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    group = next(iter(f["configurations"].values()))
    value = group.attrs.get(sys.argv[2], "")
    print(value.decode() if isinstance(value, bytes) else value)
EOF
}

# row CHECK SECONDS STATUS RUNS RESULT PROBLEMS
row() {
  local verdict=PASS
  [[ -n "$6" ]] && { verdict="FAIL: $6"; status=1; }
  rows+=("$1|$2|$3|$4|$5|$verdict")
  note "# $1: $verdict"
}

checks=" ${CHECKS:-spin healthy startup} "

# 1. A kernel that never ends, in run 2 of a 1-GPU job: stopped within the bound, 2 runs kept, --resume completes.
if [[ "$checks" == *" spin "* ]]; then
spin_file="$out/spin.h5"
rm -f "$spin_file"
note "## spinning kernel (MGPU_FAULT_SPIN_KERNEL_RUN=2, --timeout $spin_timeout)"
start=$(date +%s.%N)
timeout --kill-after=10 $((spin_timeout + 60)) "${mpirun[@]}" -x MGPU_FAULT_SPIN_KERNEL_RUN=2 -np 1 "$bin/mgpu_bench" \
  --model medium --runs 5 --timeout "$spin_timeout" --output "$spin_file" >>"$log" 2>"$out/spin.err"
spin_status=$?
cat "$out/spin.err" >>"$log"
# From the start of the job: set-up and 2 runs (a few seconds) come before the bound starts.
seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
problems=""
[[ $spin_status -eq 124 ]] || problems+="exit status $spin_status, expected 124; "
grep -qE "watchdog stopped the job: configuration 'medium_b32_n1_cuda', run 2(, step [0-9]+)?: rank 0@[^ ]+ waited [0-9.]+ s for the run's steps on the GPU \(CUDA events\), which never finished; 2 completed runs of 'medium_b32_n1_cuda' kept in '.*', marked interrupted; --resume completes it" "$out/spin.err" ||
  problems+="no watchdog line (got: $(grep -m1 mgpu_bench "$out/spin.err")); "
awk -v t="$seconds" -v b="$((spin_timeout + 10 + 30))" 'BEGIN { exit !(t <= b) }' ||
  problems+="took $seconds s (bound: --timeout + 10 s after about 30 s of set-up and runs); "
runs=$(attribute "$spin_file" runs_completed)
[[ "$runs" == 2 ]] || problems+="runs_completed '$runs', expected 2; "
[[ "$(attribute "$spin_file" interrupted)" == watchdog:* ]] || problems+="not marked interrupted by the watchdog; "
resumed="failed"
if "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model medium --runs 5 --timeout "$spin_timeout" --output "$spin_file" \
  --resume >>"$log" 2>&1 && [[ "$(attribute "$spin_file" complete)" == 1 ]]; then
  resumed="completed ($(attribute "$spin_file" runs_completed) runs)"
else
  problems+="--resume did not complete it; "
fi
python3 "$root/tests/end_to_end/check_results_h5py.py" "$spin_file" --expect-runs 6 --expect-complete >>"$log" 2>&1 ||
  problems+="h5py check failed; "
row "spinning kernel, --timeout $spin_timeout" "$seconds" "$spin_status" "$runs" "$resumed" "$problems"
fi

# 2. Healthy default jobs of each preset: the derived timeout never fires.
models=""
[[ "$checks" == *" healthy "* ]] && models="medium large"
for model in $models; do
  file="$out/healthy_$model.h5"
  rm -f "$file"
  note "## healthy: --model $model --runs 50 (default --timeout)"
  start=$(date +%s.%N)
  timeout --kill-after=10 300 "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model "$model" --runs 50 --output "$file" \
    >>"$log" 2>"$out/healthy_$model.err"
  job_status=$?
  cat "$out/healthy_$model.err" >>"$log"
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  problems=""
  [[ $job_status -eq 0 ]] || problems+="exit status $job_status; "
  grep -q watchdog "$out/healthy_$model.err" && problems+="the watchdog spoke: $(grep -m1 watchdog "$out/healthy_$model.err"); "
  runs=$(attribute "$file" runs_completed)
  # --runs 50 counts the unmarked runs; the default timing adds max(1, 50 / 4) = 12 phase-marked runs.
  [[ "$runs" == 62 && "$(attribute "$file" complete)" == 1 ]] || problems+="runs_completed '$runs', not complete; "
  python3 "$root/tests/end_to_end/check_results_h5py.py" "$file" --expect-runs 62 --expect-complete >>"$log" 2>&1 ||
    problems+="h5py check failed; "
  row "healthy --model $model --runs 50" "$seconds" "$job_status" "$runs" "-" "$problems"
done

# 3. The start-up fault matrix on 2 and 4 GPUs (the first GPUs of the machine).
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
for ranks in ${STARTUP_GPUS:-2 4}; do
  [[ "$checks" == *" startup "* ]] && ((gpus >= ranks)) || continue
  note "## start-up faults on $ranks GPUs"
  : > "$out/startup_rows_$ranks"
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((ranks - 1))) MGPU_FAULT_DEVICE=cuda MGPU_FAULT_RANKS=$ranks \
    MGPU_FAULT_TIMEOUT=${STARTUP_TIMEOUT:-10} MGPU_FAULT_POINTS="${STARTUP_POINTS:-fork mpi-start setup first-run after:3}" \
    MGPU_FAULT_ROWS="$out/startup_rows_$ranks" MGPU_H5PY_PYTHON=python3 MPIEXEC="${mpirun[0]}" \
    bash "$root/tests/end_to_end/startup_faults_test.sh" "$bin" "$out/startup_$ranks" >>"$log" 2>&1
  while IFS='|' read -r name seconds job_status runs resumed verdict; do
    problems=""
    [[ "$verdict" == PASS ]] || problems="${verdict#FAIL: }"
    row "$ranks GPUs: $name" "$seconds" "$job_status" "$runs" "$resumed" "$problems"
  done < "$out/startup_rows_$ranks"
done

note ""
note "# reliability ($gpus x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
printf '%-36s %8s %7s %5s  %-22s %s\n' check seconds status runs "--resume" verdict | tee -a "$log"
for r in "${rows[@]}"; do
  IFS='|' read -r name seconds job_status runs resumed verdict <<<"$r"
  printf '%-36s %8s %7s %5s  %-22s %s\n' "$name" "$seconds" "$job_status" "$runs" "$resumed" "$verdict" | tee -a "$log"
done
exit $status
