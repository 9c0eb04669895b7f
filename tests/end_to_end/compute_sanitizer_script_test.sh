#!/usr/bin/env bash
# Purpose: tests/gpu/compute_sanitizer.sh's product part without a GPU: a stand-in compute-sanitizer (writes a chosen log,
# records its arguments) and a stand-in mpirun (records its options, starts the command once a rank) check mpirun's
# options (every rank unbound by default), the options each tool gets (the kernel filter and exclusion for racecheck and
# synccheck only, racecheck's shorter runs and the batches a row gives it), the row's label, how errors are counted from
# the logs (NCCL's expected probes not counted, a missing log counted, ranks summed), that the sanitizer's internal
# error is named as such, that racecheck's hazards inside library kernels are named but not counted, that the 4-rank
# rows run with RANKS=4 alone, and the exit status. Exits 1 when a case fails.
#
# Usage: tests/end_to_end/compute_sanitizer_script_test.sh [WORK_DIR]
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT="$HERE/../gpu/compute_sanitizer.sh"
WORK=${1:-$(mktemp -d /tmp/mgpu_sanitizer_script_XXXXXX)}
mkdir -p "$WORK"

cat >"$WORK/sanitizer" <<'EOF'
#!/usr/bin/env bash
# Stand-in compute-sanitizer: its arguments into $FAKE_ARGS.<pid>, $FAKE_LOG (or no log when "none") as its log.
echo "$*" >"$FAKE_ARGS.$$"
while (($#)); do
  if [[ "$1" == --log-file ]]; then
    [[ "$FAKE_LOG" == none ]] || cp "$FAKE_LOG" "${2//%p/$$}"
  fi
  shift
done
exit "${FAKE_EXIT:-0}"
EOF
cat >"$WORK/mpirun" <<'EOF'
#!/usr/bin/env bash
# Stand-in mpirun: its options into $FAKE_MPIRUN_ARGS; -np N starts the command N times at once; -x NAME and
# --bind-to X are ignored (the environment is inherited).
ranks=1
options=()
while [[ "$1" == -* ]]; do
  case "$1" in
    -np) ranks="$2"; options+=("$1" "$2"); shift 2 ;;
    --allow-run-as-root) options+=("$1"); shift ;;
    *) options+=("$1" "$2"); shift 2 ;;
  esac
done
echo "${options[*]}" >>"$FAKE_MPIRUN_ARGS"
# Each rank waited for by its pid: `wait -n` can answer 127 (no job) once an ended rank has left bash's job table;
# `wait PID` still finds its status.
status=0
pids=()
for ((rank = 0; rank < ranks; ++rank)); do "$@" & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
exit "$status"
EOF
chmod +x "$WORK/sanitizer" "$WORK/mpirun"

clean_log="$WORK/clean.log"
printf '========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n' >"$clean_log"
# Two of NCCL's expected probes, and nothing else: 0 errors of ours.
probes_log="$WORK/probes.log"
cat >"$probes_log" <<'EOF'
========= COMPUTE-SANITIZER
========= Program hit cudaErrorNoKernelImageForDevice (error 209) due to "no kernel image is available for execution on the device" on CUDA API call to cudaFuncGetAttributes.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: ncclInitKernelsForDevice [0x5a3b1] in libnccl.so.2
=========
========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuMemRetainAllocationHandle.
=========         Host Frame: ncclRegisterBuffer [0x7c1d2] in libnccl.so.2
=========
========= ERROR SUMMARY: 2 errors
EOF
hazard_log="$WORK/hazard.log"
cat >"$hazard_log" <<'EOF'
========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at void mgpu::kernels::(anonymous namespace)::output_head_kernel<16>(const float *, float *, int)+0x1a0 in /src/kernels/output_head.cu:128
=========     and Read access at void mgpu::kernels::(anonymous namespace)::output_head_kernel<16>(const float *, float *, int)+0x230 in /src/kernels/output_head.cu:131 [4 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
EOF
# racecheck's hazards inside cuBLAS's kernels, as its default and its per-hazard reports print them.
library_log="$WORK/library.log"
cat >"$library_log" <<'EOF'
========= COMPUTE-SANITIZER
========= Error: Race reported between Read access at nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT+0xb30
=========     and Write access at nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT+0x2f60 [256 hazards]
=========
========= Error: Potential WAR hazard detected at __shared__ 0x28488 in block (0,15,0) :
=========     Read Thread (31,0,0) at nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT+0xb30
=========     Write Thread (256,0,0) at nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT+0x2f60
=========     Current Value : 31, Incoming Value : 31
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cublasLtMatmul [0xf92a56] in libcublasLt.so.13
=========         Host Frame:  [0x10b1b8] in mgpu_bench
=========
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
EOF
# One of cuBLAS's and one of ours; and cuBLAS's two with a third beyond the print limit, which no report names.
mixed_log="$WORK/mixed.log"
{ sed -n '1,4p' "$library_log"; sed -n '2,4p' "$hazard_log"; tail -n 1 "$library_log"; } >"$mixed_log"
unprinted_log="$WORK/unprinted.log"
sed 's/RACECHECK SUMMARY: 2 hazards displayed (2 errors/RACECHECK SUMMARY: 3 hazards displayed (3 errors/' \
  "$library_log" >"$unprinted_log"
internal_log="$WORK/internal.log"
cat >"$internal_log" <<'EOF'
========= COMPUTE-SANITIZER
========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.
========= Target application returned an error
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
EOF

failures=0
case_number=0
# run_case NAME LOG EXIT EXPECTED_STATUS [VAR=VALUE ...]: the script over the product with the stand-ins; its table
# row(s) in $WORK/NAME/table.md, the stand-in's arguments in $WORK/NAME/args.*.
run_case() {
  local name="$1" log="$2" exit_status="$3" expected="$4"
  shift 4
  case_number=$((case_number + 1))
  rm -rf "${WORK:?}/$name"
  mkdir -p "$WORK/$name"
  env PARTS=product BENCH=/bin/true COMPUTE_SANITIZER="$WORK/sanitizer" MPIRUN="$WORK/mpirun" PATH="$WORK:$PATH" \
    FAKE_LOG="$log" FAKE_EXIT="$exit_status" FAKE_ARGS="$WORK/$name/args" FAKE_MPIRUN_ARGS="$WORK/$name/mpirun_args" \
    OUT="$WORK/$name/out" "$@" \
    bash "$SCRIPT" >"$WORK/$name/stdout" 2>&1
  local status=$?
  if ((status != expected)); then
    fail "$name" "exit status $status, expected $expected"
  fi
}
fail() {
  echo "FAIL $1: $2"
  sed 's/^/    /' "$WORK/$1/out/table.md" 2>/dev/null
  failures=$((failures + 1))
}
# expect_row NAME PATTERN: the table has a row matching the extended regular expression.
expect_row() {
  grep -Eq -- "$2" "$WORK/$1/out/table.md" || fail "$1" "no table row matches '$2'"
}
# expect_args NAME PATTERN [absent]: every sanitizer call's arguments match (or, with "absent", none does).
expect_args() {
  local file matched=0 total=0
  for file in "$WORK/$1"/args.*; do
    [[ -e "$file" ]] || continue
    total=$((total + 1))
    grep -Eq -- "$2" "$file" && matched=$((matched + 1))
  done
  if [[ "${3:-}" == absent ]]; then
    ((total > 0 && matched == 0)) || fail "$1" "$matched of $total sanitizer calls match '$2'"
  else
    ((total > 0 && matched == total)) || fail "$1" "$matched of $total sanitizer calls match '$2'"
  fi
}

# racecheck and synccheck check our kernels but the reference GEMM by default, and the row says so.
run_case racecheck_default "$clean_log" 0 0 TOOLS=racecheck ROWS=18:8
expect_args racecheck_default '^--tool racecheck --kernel-name kns=mgpu --kernel-name-exclude kns=reference_gemm --log-file '
expect_row racecheck_default '^\| racecheck +\| row 18, 1 rank\(s\): --model medium --batch 8 \(kernels: kns=mgpu\) \(not: kns=reference_gemm\) +\| +1 \| +0 \| +[0-9]+ \| ok \|$'
run_case synccheck_default "$clean_log" 0 0 TOOLS=synccheck ROWS=18:8
expect_args synccheck_default '--kernel-name kns=mgpu --kernel-name-exclude kns=reference_gemm '

# racecheck runs the fewest steps that launch every kernel, unmarked: one, or both kinds of an accumulating step;
# the other tools run three, every run kind included.
expect_args racecheck_default ' --model medium --batch 8 --runs 1 --warmup 0 --steps 1 --timing none --timeout 0 '
run_case racecheck_accumulate "$clean_log" 0 0 TOOLS=racecheck ROWS=28:8
expect_args racecheck_accumulate ' --accumulate 2 --runs 1 --warmup 0 --steps 2 --timing none --timeout 0 '
expect_args synccheck_default ' --batch 8 --runs 1 --warmup 0 --steps 3 --timeout 0 '

# Both emptied: every kernel checked, and no option names one.
run_case racecheck_every_kernel "$clean_log" 0 0 TOOLS=racecheck ROWS=18:8 KERNEL_FILTER= KERNEL_EXCLUDE=
expect_args racecheck_every_kernel '--kernel-name' absent
expect_row racecheck_every_kernel '^\| racecheck +\| row 18, 1 rank\(s\): --model medium --batch 8 +\| +1 \| +0 \|'

# memcheck and initcheck check every kernel whatever the filter; memcheck reports leaks.
run_case memcheck_every_kernel "$clean_log" 0 0 TOOLS="memcheck initcheck" ROWS=18:8 KERNEL_FILTER=kns=x KERNEL_EXCLUDE=kns=y
expect_args memcheck_every_kernel '--kernel-name' absent
expect_args memcheck_every_kernel '^--tool (memcheck --leak-check full|initcheck) --log-file '

# NCCL's expected probes are not ours: 0 errors, ok.
run_case nccl_probes "$probes_log" 0 0 TOOLS=memcheck ROWS=18:8
expect_row nccl_probes '\| +1 \| +0 \| +[0-9]+ \| ok \|$'

# By default every rank is left unbound: Open MPI would pin each lane's ranks to the same first cores.
run_case default_mpirun "$clean_log" 0 0 TOOLS=racecheck ROWS=18:8,15 MPIRUN= LANES=2 GPUS="0 1" SPLIT=configurations
if ! grep -Eq -- '^--allow-run-as-root --bind-to none -np 1 -x NCCL_NVLS_ENABLE$' "$WORK/default_mpirun/mpirun_args" ||
  grep -Evq -- '--bind-to none' "$WORK/default_mpirun/mpirun_args"; then
  fail default_mpirun "mpirun's options: $(sort -u "$WORK/default_mpirun/mpirun_args" 2>/dev/null | tr '\n' ';')"
fi
expect_row default_mpirun '^\| racecheck +\| row 18, 1 rank\(s\): --model medium --batch 15 .*\| ok \|$'

# A hazard on each of two ranks: 2 errors, failed; the configurations of the row counted; the row names the kernel
# both logs report, where the logs need not come back.
run_case two_rank_hazards "$hazard_log" 0 1 TOOLS=racecheck ROWS=15 RANKS=2
expect_args two_rank_hazards ' --gpus 2 --grad-dtype bf16 --overlap on '
expect_row two_rank_hazards '^\| racecheck +\| row 15, 2 rank\(s\): .* \| +2 \| +2 \| +[0-9]+ \| FAIL \(exit 0; in output_head_kernel \(output_head\.cu:128\) x2; see '

# Hazards inside library kernels alone are named but not counted: ok. One of ours among them, or one no report names,
# fails the row, which counts those alone.
run_case library_hazards "$library_log" 0 0 TOOLS=racecheck ROWS=10:8 KERNEL_FILTER=
expect_row library_hazards '^\| racecheck +\| row 10, 1 rank\(s\): --model large --batch 8 --precision bf16 .*\| +1 \| +0 \| +[0-9]+ \| ok; not ours: 2 hazards in nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT x2 \|$'
run_case mixed_hazards "$mixed_log" 0 1 TOOLS=racecheck ROWS=10:8 KERNEL_FILTER=
expect_row mixed_hazards '\| +1 \| +1 \| +[0-9]+ \| FAIL \(exit 0; in [^;]*output_head_kernel \(output_head\.cu:128\) x1'
run_case unprinted_hazard "$unprinted_log" 0 1 TOOLS=racecheck ROWS=10:8 KERNEL_FILTER=
expect_row unprinted_hazard '\| +1 \| +1 \| +[0-9]+ \| FAIL \(exit 0; in nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT x2; see '

# Large TF32's racecheck takes batches 8 and 64 of its row (9); synccheck the whole row; a batch ROWS names, any.
run_case tf32_racecheck_batches "$clean_log" 0 0 TOOLS="racecheck synccheck" ROWS=9
expect_row tf32_racecheck_batches '^\| racecheck +\| row 9, 1 rank\(s\): --model large --batch 8,64 --precision tf32 .*\| +2 \| +0 \|'
expect_row tf32_racecheck_batches '^\| synccheck +\| row 9, 1 rank\(s\): --model large --batch 8,64,1024 --precision tf32 .*\| +3 \| +0 \|'
run_case tf32_racecheck_named "$clean_log" 0 0 TOOLS=racecheck ROWS=9:1024
expect_row tf32_racecheck_named '^\| racecheck +\| row 9, 1 rank\(s\): --model large --batch 1024 --precision tf32 .*\| +1 \| +0 \|'

# The 4-rank rows (the default step of 4 GPUs) run with RANKS=4 alone, under memcheck and initcheck only.
run_case four_ranks "$clean_log" 0 0 TOOLS="memcheck synccheck" RANKS=4
expect_row four_ranks '^\| memcheck +\| row 43, 4 rank\(s\): --model large --batch 8,4096 --gpus 4 +\| +2 \| +0 \|'
expect_row four_ranks '^\| memcheck +\| row 44, 4 rank\(s\): --model medium --batch 8,4096 --gpus 4 +\| +2 \| +0 \|'
[[ $(grep -Ec '^\| (memcheck|synccheck) ' "$WORK/four_ranks/out/table.md") == 2 ]] || fail four_ranks "not exactly rows 43 and 44"
grep -q -- '-np 4 ' "$WORK/four_ranks/mpirun_args" || fail four_ranks "no run of 4 ranks"
run_case default_ranks "$clean_log" 0 0 TOOLS=memcheck
expect_row default_ranks '^\| memcheck +\| row 42, 1 rank\(s\): '
! grep -Eq -- '4 rank\(s\)' "$WORK/default_ranks/out/table.md" || fail default_ranks "a 4-rank row ran without RANKS=4"

# A run without a log (the sanitizer or the program died before writing one) is one error.
run_case missing_log none 0 1 TOOLS=synccheck ROWS=18:8
expect_row missing_log '\| +1 \| +1 \| +[0-9]+ \| FAIL \(exit 0; see '

# The sanitizer's internal error is named, counted and fails the run.
run_case internal_error "$internal_log" 1 1 TOOLS=racecheck ROWS=27:1024
expect_row internal_error "^\| racecheck +\| row 27, 1 rank\(s\): --model medium --batch 1024 --precision bf16 .* \| +1 \| +1 \| +[0-9]+ \| FAIL \(compute-sanitizer's internal error, exit 1; see "

# A clean log but a failing program: failed, and not called an internal error.
run_case program_failed "$clean_log" 3 1 TOOLS=racecheck ROWS=18:8
expect_row program_failed '\| +1 \| +0 \| +[0-9]+ \| FAIL \(exit 3; see '

echo "compute_sanitizer_script: $case_number cases, $failures failed"
((failures == 0))
