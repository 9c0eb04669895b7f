#!/usr/bin/env bash
# Purpose: the whole N-GPU verification (N = 2 or 4) in one call, composed of the suite's own scripts, each part under
# its own time limit within one overall budget; one Markdown summary (a row per check: what ran, its figures, the
# target, PASS/FAIL/not run and why) printed last and written to $OUT/summary.md.
# 2 GPUs: the GPU test binaries, the user's `mpirun -np 2 mgpu_bench --model large --batch 32` and its report,
# timing_overhead.sh, large_batch_performance.sh, predict_check.sh, fault_injection_test.sh (NCCL path). 4 GPUs: the
# data-parallel test, the 1,2,4-GPU grid and its report's speedups, the all-reduce sweep, a rank of 4 killed or stopped.
# Usage: GPUS=2 BIN_DIR=build OUT=/tmp/multi bash tests/gpu/multi_gpu_check.sh
# Knobs: GPUS (2 or 4; default: the GPUs nvidia-smi lists), BUDGET_S (default 560, for a 600-second command; a part
# that no longer fits says "not run: time"), SKIP (parts left out: tests user timing perf predict faults; with 4 GPUs
# tests grid allreduce faults), RUNS (--runs of the default command and the 4-GPU grid; default mgpu_bench's),
# TIMING_RUNS (10), PERF_RUNS (5), PEER_RUNS (3), PREDICT_RUNS (10), FAULT_CASES (fault_injection_test.sh's names),
# DEVICE=cpu (a dry run on the CPU fallback with tiny run counts, the default without enough GPUs: it exercises what a
# CPU can run; GPU-only parts say "not run: no GPU"). Exit status 1 when a check failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_multi_gpu_check}"
mkdir -p "$out" && out="$(cd "$out" && pwd)"
work="$out/work"  # all but the summary's few files: packed into one archive at the end
rm -rf "$work" && mkdir -p "$work"
# No file of an earlier call left to be taken for this one's.
rm -f "$out"/{summary.md,user_command.txt,{timing_overhead,large_batch_table,predict_check}.md} \
  "$out"/{faults,grid_report,allreduce}.txt "$out/multi_gpu_check.tar.gz"
log="$out/check.log" && : >"$log"
listed=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
gpus="${GPUS:-$((listed >= 2 ? listed : 2))}"
[[ $gpus == 2 || $gpus == 4 ]] || { echo "multi_gpu_check: set GPUS=2 or GPUS=4 (not $gpus)" >&2; exit 2; }
device="${DEVICE:-$( ((listed >= gpus)) && echo cuda || echo cpu)}"
runs="${RUNS:-}" dry=()
if [[ $device == cpu ]]; then
  # A rehearsal of the control flow: the CPU fallback, few short runs, more ranks than cores.
  dry=(--device cpu --warmup 1 --steps 3) runs="${RUNS:-2}"
  export MPIRUN_ARGS="${MPIRUN_ARGS:---oversubscribe}"
fi
runs_opt=()
[[ -n $runs ]] && runs_opt=(--runs "$runs")
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array (with MPIRUN_ARGS) and note().
source "$root/bench/common.sh"
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } >>"$log" 2>&1
budget="${BUDGET_S:-560}" started=$SECONDS skip=" ${SKIP:-} " rows=() status=0

# tool NAME: the binary in BIN_DIR or BIN_DIR/tests (where the build puts the tests); nothing when not built.
tool() { local d; for d in "$bin" "$bin/tests"; do [[ -x "$d/$1" ]] && { echo "$d/$1"; return; }; done; }
# slot PART SECONDS MIN [gpu]: whether PART runs now; sets limit (SECONDS, less where the budget ends first) or why.
slot() {
  local left=$((budget - (SECONDS - started) - 15))  # 15 s: timeout's grace and the packing at the end
  limit=$(($2 < left ? $2 : left)) why=""
  if [[ $skip == *" $1 "* ]]; then why="not run: SKIP"
  elif [[ ${4:-} == gpu && $device != cuda ]]; then why="not run: no GPU"
  elif ((limit < $3)); then why="not run: time ($((left > 0 ? left : 0)) s of BUDGET_S $budget left)"; fi
  note "## $1 at $((SECONDS - started)) s: ${why:-limit $limit s}"
  [[ -z $why ]]
}
run() {  # run SECONDS FILE COMMAND...: the command under a time limit, its output in FILE; sets rc
  echo "\$ ${*:3}" >>"$log"
  timeout --kill-after=10 "$1" "${@:3}" >"$2" 2>&1
  rc=$? && echo "# exit $rc" >>"$log"
}
words() { echo "$*"; }  # a command line for the summary
ended() { ((rc == 124 || rc == 137)) && echo "stopped at its $limit s limit" || echo "exit $rc"; }
# verdict NAME STATUS REASON [target]: sets NAME to PASS (STATUS 0) or FAIL: REASON. A CPU dry run says so and
# judges no measured target (a CPU's figures say nothing of a GPU's).
verdict() {
  local v="PASS" && (($2 == 0)) || v="FAIL: $3"
  [[ $device == cpu && ${4:-} == target ]] && v="target not judged"
  [[ $device == cpu ]] && v="dry run (CPU): $v"
  printf -v "$1" '%s' "$v"
}
row() {  # row CHECK WHAT FIGURES TARGET RESULT: a line of the summary ('|' in a cell escaped)
  local cells=("$@") i
  for i in "${!cells[@]}"; do cells[i]=${cells[i]//|/\\|}; done
  rows+=("| ${cells[0]} | ${cells[1]} | ${cells[2]:--} | ${cells[3]} | ${cells[4]} |")
  [[ $5 == FAIL* || $5 == "dry run (CPU): FAIL"* ]] && status=1
  note "# $1: $5"
}

# GPU tests: every test must run and pass (a skip on a GPU machine is a GPU test that did not run). 300 s each:
# test_cuda_data_parallel on 2 ranks took about 150 s on one 4 x H100 host (90 s on 4 ranks there).
part_tests() {
  local t path what file counts result launch passed failed skipped names=(test_cuda_data_parallel test_cuda_mlp
    test_gpu_devices test_skinny_gemm test_relu_dropout_backward_bias test_generate_batch)
  ((gpus == 4)) && names=(test_cuda_data_parallel)
  for t in "${names[@]}"; do
    path=$(tool "$t") what=$t file="$work/$t.txt" counts="" launch=()
    [[ $t == test_cuda_data_parallel ]] && launch=("${mpirun[@]}" -np "$gpus") what="mpirun -np $gpus $t"
    if ! slot tests 300 10; then result=$why
    elif [[ -z $path ]]; then result="not run: not built in BIN_DIR"
    else
      run "$limit" "$file" "${launch[@]}" "$path" --gtest_brief=1 --gtest_color=no
      passed=$(grep -oP '^\[  PASSED  \] \K[0-9]+' "$file" | tail -n 1)
      failed=$(grep -oP '^\[  FAILED  \] \K[0-9]+(?= tests?,)' "$file" | tail -n 1)
      skipped=$(grep -oP '^\[  SKIPPED \] \K[0-9]+(?= tests?[,.])' "$file" | tail -n 1)
      counts="${passed:-0} passed, ${failed:-0} failed, ${skipped:-0} skipped; $(ended)"
      ((rc == 0 && ${failed:-0} == 0 && ${skipped:-0} == 0 && ${passed:-0} > 0)); verdict result $? "$counts"
      [[ $device == cpu && $rc == 0 ]] && result="not run: no GPU (its tests skip themselves)"
    fi
    row "$t" "$what" "$counts" "every test runs and passes" "$result"
  done
}

# bench_and_report PART SECONDS NAME ARGS...: mgpu_bench ARGS on GPUS ranks in a folder of its own (where a user's
# default results file lands), then mgpu_analyze report on its file; sets file, rc (mgpu_bench's) and report_rc.
bench_and_report() {
  local part=$1 seconds=$2 name=$3 bench_rc && shift 3
  file="" report_rc=""
  slot "$part" "$seconds" 30 && mkdir -p "$work/$name" && cd "$work/$name" || return 1
  run "$limit" "$work/$name.txt" "${mpirun[@]}" -np "$gpus" "$bin/mgpu_bench" "$@" "${runs_opt[@]}" "${dry[@]}"
  bench_rc=$rc file=$(grep -oP '^# results: \K.*' "$work/$name.txt" | head -n 1)
  [[ -n $file ]] && file=$(realpath "$file")
  cd "$root" && run 60 "$work/$name.report.txt" "$bin/mgpu_analyze" report "$file"
  report_rc=$rc rc=$bench_rc
}

part_user() {
  local f1="" r1="" r2="" last text what
  what=$(words mpirun -np 2 mgpu_bench --model large --batch 32 "${runs_opt[@]}" "${dry[@]}")
  if bench_and_report user 120 user --model large --batch 32; then
    last=$(tail -n 1 "$work/user.txt" | sed 's/^#  *//')
    # The verdict: the lines under its heading, joined.
    text=$(awk '/^# verdict/ { v = 1; next } v { sub(/^# +/, ""); printf "%s%s", n++ ? "; " : "", $0 }' \
      "$work/user.txt")
    { echo "\$ $what"; cat "$work/user.txt"; echo; echo "\$ mgpu_analyze report $file"; cat "$work/user.report.txt"
    } >"$out/user_command.txt"
    f1="$(ended); verdict: ${text:-none}"
    [[ $text == *"$last" ]] || f1+="; last line: $last"
    ((rc == 0)) && [[ -n $text ]]; verdict r1 $? "$(ended)${text:-, no verdict}"
    verdict r2 "$report_rc" "exit $report_rc"
  fi
  row "default command" "$what" "$f1" "exit 0, a verdict" "${r1:-$why}"
  row "its report" "mgpu_analyze report FILE" "${report_rc:+exit $report_rc}" "exit 0" "${r2:-$why}"
}

part_timing() {
  local dir="$work/timing" f1="" f2="" r1="" r2="" reason settings
  settings=(BIN_DIR="$bin" OUT="$dir" RANKS="$gpus" RUNS="${TIMING_RUNS:-10}")
  [[ $device == cpu ]] && settings+=(RUNS=2 MODELS=medium "BATCHES=8,32" WARMUP=1 STEPS=3 BENCH_ARGS="--device cpu")
  if slot timing 200 60; then
    run "$limit" "$work/timing.txt" env "${settings[@]}" bash "$root/bench/timing_overhead.sh"
    cp "$dir/table.md" "$out/timing_overhead.md" 2>/dev/null
    # The script's table: overhead cells (column 5), then speedup pairs (column 6: do the intervals overlap).
    f1=$(awk -F' *[|] *' '$5 ~ /%$/ { v = $5 + 0; a = v < 0 ? -v : v; n++; if (a >= m) { m = a; w = $2 } }
      END { if (n) printf "max |overhead| %.2f%% (%s) over %d cells", m, w, n }' "$dir/table.md" 2>/dev/null)
    f2=$(awk -F' *[|] *' 'NF == 7 && $6 ~ /^(yes|no|no interval)$/ { n++; k += $6 == "yes"
      if ($6 != "yes") apart = apart "; not " $2 " " $3 } END { if (n) printf "%d of %d overlap%s", k, n, apart }' \
      "$dir/table.md" 2>/dev/null)
    reason="$(ended)$(grep -s -m1 FAIL "$dir/failures.txt" | sed 's/^/; /')"
    [[ -n $f1 ]] && ! grep -qs overhead "$dir/failures.txt"; verdict r1 $? "$reason" target
    [[ -n $f2 ]] && ! grep -qs apart "$dir/failures.txt"; verdict r2 $? "$reason" target
  fi
  row "timing overhead" "RANKS=$gpus bench/timing_overhead.sh: --timing interleaved vs none, medium,large x 8..4096" \
    "$f1" "every cell within ±2%" "${r1:-$why}"
  row "speedups vs --timing step" "the same call: the default's 2-over-1 speedups vs --timing step's" "$f2" \
    "every pair of Fieller 95% intervals overlaps" "${r2:-$why}"
}

part_perf() {
  local dir="$work/perf" f1="" f2="" r1="" r2="" table n worst at none speedup
  if slot perf 240 90 gpu; then
    # No Nsight Compute table, no eager DDP (never the strongest peer), no tests (run above): the time goes to the
    # figures; its own budget (checked before each step) leaves time for its tables.
    run "$limit" "$work/perf.txt" env BIN_DIR="$bin" OUT="$dir" GPUS="$gpus" RUNS="${PERF_RUNS:-5}" \
      PEER_RUNS="${PEER_RUNS:-3}" NCU=0 DDP=0 TESTS=0 BUDGET_S=$((limit * 2 / 3)) \
      bash "$root/bench/large_batch_performance.sh"
    table="$dir/large_batch_table.md"
    [[ -s $table ]] && cp "$table" "$out/large_batch_table.md" || table=/dev/null
    # The N-GPU table: cells, the worst ours / peer (column 7) and where, cells without a peer, the speedup (11).
    IFS=';' read -r n worst at none speedup < <(awk -F' *[|] *' -v h="model, batch, $gpus GPU(s)" '
      /^[|] model, batch,/ { t = ($2 == h); next }
      t && $2 ~ /^(medium|large) [0-9]+$/ { n++; if ($7 == "n/a") none++; else if ($7 + 0 >= w) { w = $7 + 0; at = $2 }
        if ($2 == "large 4096") s = $11 }
      END { printf "%d;%s;%s;%d;%s\n", n, w + 0, at, none, s == "" ? "not run" : s }' "$table")
    f1="worst ours/peer $worst (${at:-none}) over $n cells, $none without a peer; $(ended)"
    ((n > 0)) || f1="no $gpus-GPU table; $(ended); $(grep -m1 FAILED "$dir/large_batch.log" | cut -c1-100)"
    ((n > 0 && none == 0)) && awk -v w="$worst" 'BEGIN { exit !(w <= 0.9) }'; verdict r1 $? "$f1" target
    f2="large 4096: $speedup"
    awk -v s="$speedup" 'BEGIN { exit !(s + 0 >= 1.85) }'; verdict r2 $? "$f2" target
  fi
  row "ours vs strongest PyTorch peer" "GPUS=$gpus bench/large_batch_performance.sh (--timing step; graph, graph-dp)" \
    "$f1" "every cell ≤ 0.9 x peer" "${r1:-$why}"
  row "$gpus-GPU speedup" "the same call: large 4096 on $gpus GPUs over 1" "$f2" "≥ 1.85" "${r2:-$why}"
}

part_predict() {
  local dir="$work/predict" f1="" r1="" line
  if slot predict 150 45 gpu; then
    run "$limit" "$work/predict.txt" env BIN_DIR="$bin" OUT="$dir" RANKS="$gpus" RUNS="${PREDICT_RUNS:-10}" \
      bash "$root/bench/predict_check.sh"
    line=$(grep '^step |error|' "$work/predict.txt" | tail -n 1)
    [[ -n $line ]] && { cat "$dir/check.markdown"; echo; echo "$line"; } >"$out/predict_check.md"
    f1="${line:-$(ended); $(grep -m1 FAILED "$work/predict.txt" | cut -c1-100)}"
    [[ $line == *": PASS" ]]; verdict r1 $? "$f1" target
  fi
  row "prediction" "RANKS=$gpus bench/predict_check.sh: mgpu_analyze predict --check, 1- and $gpus-GPU grid" "$f1" \
    "median step error ≤ 5%, worst ≤ 15%" "${r1:-$why}"
}

part_faults() {
  local dir="$work/faults" cases count h5py="" reported=0 name seconds code kept resumed text target result
  cases="${FAULT_CASES:-sigkill sigstop term-launcher int-launcher}"
  ((gpus == 4)) && cases="${FAULT_CASES:-sigkill sigstop}"
  count=$(wc -w <<<"$cases")
  python3 -c 'import h5py' 2>/dev/null && h5py=python3
  if ! slot faults 200 60; then
    row "fault cases: $cases" "fault_injection_test.sh, $gpus ranks" "" "each ends within its bound" "$why"
    return
  fi
  mkdir -p "$dir" && : >"$dir/rows.txt"
  run "$limit" "$work/faults.txt" env MGPU_FAULT_DEVICE="$device" MGPU_FAULT_RANKS="$gpus" MGPU_FAULT_CASES="$cases" \
    MGPU_FAULT_ROWS="$dir/rows.txt" MGPU_H5PY_PYTHON="$h5py" MPIEXEC=mpirun \
    bash "$root/tests/end_to_end/fault_injection_test.sh" "$bin" "$dir"
  sed -n '/^# fault injection (/,$p' "$work/faults.txt" >"$out/faults.txt"
  while IFS='|' read -r name seconds code kept resumed text; do
    reported=$((reported + 1)) target="ends ≤ 5 s"
    [[ $name == SIGKILL* ]] && target="ends ≤ 10 s"
    [[ $name == SIGSTOP* ]] && target="the watchdog ends it ≤ --timeout + 10 s"
    [[ $text == PASS ]]; verdict result $? "${text#FAIL: }"
    row "fault: $name" "fault_injection_test.sh, $gpus ranks, $device" \
      "exit after $seconds s, status $code, $kept runs kept, --resume $resumed" \
      "$target, runs kept, --resume completes" "$result"
  done <"$dir/rows.txt"
  verdict result 1 "$reported of $count cases reported; $(ended)"
  ((reported < count)) && row "fault cases" "fault_injection_test.sh" "" "every case" "$result"
}

part_grid() {
  local batches=32,1024,4096 f1="" f2="" r1="" r2="" speedups what
  [[ $device == cpu ]] && batches=32
  what=$(words mpirun -np 4 mgpu_bench --model medium,large --batch $batches --gpus 1,2,4 "${runs_opt[@]}" "${dry[@]}")
  # One trial per configuration (the default on GPUs is 5 to 10): the grid's figures are per configuration.
  if bench_and_report grid 300 grid --model medium,large --batch "$batches" --gpus 1,2,4 --trials 1; then
    { echo "\$ $what"; tail -n 30 "$work/grid.txt"; echo; cat "$work/grid.report.txt"; } >"$out/grid_report.txt"
    # The scaling table's 4-GPU rows: speedup with Fieller's 95% interval.
    speedups=$("$bin/mgpu_analyze" report "$file" --format json 2>/dev/null | python3 -c '
import json, sys
f = lambda v: "-" if v is None else "%.2f" % v
print("; ".join("%s %d: %s [%s, %s]" % (r["model"], r["global_batch"], f(r["speedup"]), f(r["speedup_low"]),
                f(r["speedup_high"])) for r in json.load(sys.stdin)["tables"]["scaling"]["rows"] if r["gpus"] == 4))')
    f1="sweep $(ended); report exit $report_rc" f2=${speedups:-none}
    ((rc == 0 && report_rc == 0)); verdict r1 $? "$f1"
    [[ -n $speedups && $speedups != *"[-"* ]]; verdict r2 $? "a 4-GPU speedup without its interval, or none" target
  fi
  row "4-GPU grid + report" "$what; mgpu_analyze report FILE" "$f1" "both exit 0" "${r1:-$why}"
  row "4-GPU speedups" "mgpu_analyze report --format json: scaling" "$f2" "each with its interval" "${r2:-$why}"
}

part_allreduce() {
  local f1="" r1="" small=()
  # On the CPU one short timed run per size, only to exercise the path.
  [[ $device == cpu ]] && small=(--device cpu --runs 1 --iters 2 --warmup 1)
  if slot allreduce 120 30; then
    run "$limit" "$out/allreduce.txt" "${mpirun[@]}" -np 4 "$bin/mgpu_bench" allreduce "${small[@]}" \
      --output "$work/allreduce.h5"
    # busbw of the back-to-back all-reduces (column 6) at the large gradient's bytes and at 128 MiB.
    f1=$(awk '/large gradient$/ { g = $6 " GB/s (" $1 " B)" } $1 == 134217728 { m = $6 " GB/s" }
      END { printf "busbw: large gradient %s, 128 MB %s", g ? g : "none", m ? m : "none" }' "$out/allreduce.txt")
    ((rc == 0)) && grep -q "data check: every element right" "$out/allreduce.txt"
    verdict r1 $? "$(ended), data check not passed"
  fi
  row "all-reduce, 4 GPUs" "$(words mpirun -np 4 mgpu_bench allreduce "${small[@]}")" "$f1" "data check passes" \
    "${r1:-$why}"
}

note "# multi-GPU check: $gpus GPUs, device $device, BUDGET_S $budget, SKIP '${SKIP:-}', results in $out"
part_tests
if ((gpus == 2)); then part_user; part_timing; part_perf; part_predict; else part_grid; part_allreduce; fi
part_faults
# One archive for every other file (results, logs): easier to copy back than many.
tar -C "$out" -czf "$out/multi_gpu_check.tar.gz" work && rm -rf "$work"
gpu_names=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | awk '{$1 = $1 " x"} 1')
{
  printf '# Multi-GPU check on %s GPUs\n\n%s; %s; %s; %s s of BUDGET_S %s; logs and results in %s\n' "$gpus" \
    "${gpu_names:-no GPU}" "$("$bin/mgpu_bench" --version | head -n 1)" "$(date -u +%F)" "$((SECONDS - started))" \
    "$budget" multi_gpu_check.tar.gz
  [[ $device == cpu ]] && echo "DEVICE=cpu: a dry run on the CPU fallback with tiny run counts; it checks the" \
    "script's flow, not a GPU's figures."
  printf '\n| check | command / what | figure(s) | target | result |\n|---|---|---|---|---|\n'
  printf '%s\n' "${rows[@]}"
  echo -e "\nstatus: $([[ $status == 0 ]] && echo "no check failed" || echo "a check failed")"
} >"$out/summary.md"
echo
cat "$out/summary.md"
exit "$status"
