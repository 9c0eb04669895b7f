#!/usr/bin/env bash
# Purpose: the fault-injection suite (docs/reliability.md): a 2-rank (or N-rank) job is hurt in every way a cluster
# hurts one (a rank killed, a rank stopped, SIGTERM/SIGINT to the launcher or to every rank, a full disk) and damaged
# results files are fed to the analyzer and to --resume. Each case asserts the time to exit, the exit status, the
# one-line message, that the file still holds every completed run (h5py when there is one, else h5dump), and that
# --resume then completes the configuration. Prints a table last; exits 1 when any case failed.
#
# Usage: tests/end_to_end/fault_injection_test.sh BIN_DIR [WORK_DIR]
#   BIN_DIR holds mgpu_bench and mgpu_analyze. Environment:
#   MGPU_FAULT_DEVICE   cpu (default: the CPU fallback, MPI all-reduce) or cuda (NCCL between the GPUs)
#   MGPU_FAULT_RANKS    ranks of the job (default 2); the last rank is the one killed or stopped
#   MGPU_FAULT_CASES    the cases to run (default all): sigkill sigstop sigstop-first sigstop-setup sigstop-id sigstop-nccl-init
#                       term-launcher int-launcher term-ranks int-ranks full-disk truncated corrupted
#                       (sigstop-nccl-init needs NCCL: MGPU_FAULT_DEVICE=cuda)
#   MGPU_FAULT_ROWS     a file that also gets the table's rows, one a line: case|exit s|status|runs|--resume|verdict
#   MGPU_FAULT_ARGS     the job's options but --runs (default: a small medium-model job, see below)
#   MGPU_FAULT_RUNS     its --runs (default 100)
#   MGPU_FAULT_TIMEOUT  --timeout of the job in seconds (default 5)
#   MGPU_H5PY_PYTHON    a python3 with h5py for check_results_h5py.py (else the checks use h5dump)
#   MPIEXEC             the launcher (default mpiexec)
set -u

BIN_DIR=$(cd "${1:?usage: fault_injection_test.sh BIN_DIR [WORK_DIR]}" && pwd)
WORK=${2:-$(mktemp -d /tmp/mgpu_faults_XXXXXX)}
mkdir -p "$WORK"
rm -f "$WORK/good.h5"  # made by this build, never a previous one
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$BIN_DIR/mgpu_bench"
ANALYZE="$BIN_DIR/mgpu_analyze"
DEVICE=${MGPU_FAULT_DEVICE:-cpu}
TIMEOUT=${MGPU_FAULT_TIMEOUT:-5}
MPIEXEC=${MPIEXEC:-mpiexec}
PY=${MGPU_H5PY_PYTHON:-}
RANKS=${MGPU_FAULT_RANKS:-2}
VICTIM=$((RANKS - 1))
ALL_CASES="sigkill sigstop sigstop-first sigstop-setup sigstop-id sigstop-nccl-init term-launcher int-launcher term-ranks int-ranks full-disk truncated corrupted"
CASES=" ${MGPU_FAULT_CASES:-$ALL_CASES} "
# One RANKS-rank configuration (--gpus RANKS: no 1-GPU baseline first, so every case hurts a job whose ranks all
# work), small and quick on 2 oversubscribed cores (about 0.25 s a run); on GPUs a larger step keeps the job running
# long enough to be hurt mid-run.
if [ "$DEVICE" = cpu ]; then
  DEFAULT_ARGS="--model medium --batch 32 --gpus $RANKS --warmup 3 --steps 17"
  DEFAULT_RUNS=100  # about 7 s a job: a signal sent a second in always finds it running
  DISK_RUNS=60  # more than 256 KiB hold
else
  DEFAULT_ARGS="--model large --batch 4096 --gpus $RANKS --warmup 3 --steps 17"
  DEFAULT_RUNS=100
  DISK_RUNS=100  # more than 256 KiB hold
fi
read -r -a BASE_ARGS <<< "${MGPU_FAULT_ARGS:-$DEFAULT_ARGS}"
BASE_ARGS+=(--device "$DEVICE" --timeout "$TIMEOUT")
JOB_ARGS=("${BASE_ARGS[@]}" --runs "${MGPU_FAULT_RUNS:-$DEFAULT_RUNS}")
LAUNCH=("$MPIEXEC" -n "$RANKS")
[ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)
[ "$DEVICE" = cpu ] && LAUNCH+=(--oversubscribe)
export OMPI_MCA_btl_vader_single_copy_mechanism=none NCCL_NVLS_ENABLE=0

for tool in "$BENCH" "$ANALYZE"; do
  [ -x "$tool" ] || { echo "fault_injection_test: $tool is missing" >&2; exit 2; }
done

source "$HERE/fault_common.sh"

# Starts the job in the background; sets JOB_PID (the launcher) and waits until it is measuring.
start_job() {  # file [launch prefix...]
  local file=$1
  shift
  rm -f "$file"
  "$@" "${LAUNCH[@]}" "$BENCH" "${JOB_ARGS[@]}" --output "$file" > "$WORK/job.out" 2> "$WORK/job.err" &
  JOB_PID=$!
  # Measuring once a run line is printed: the run table's rows start with the run number.
  local waited=0
  until grep -qE '(^|K) +[0-9]+ +[0-9]' "$WORK/job.out" 2>/dev/null; do
    sleep 0.2
    waited=$((waited + 1))
    if [ $waited -ge 600 ] || ! kill -0 "$JOB_PID" 2>/dev/null; then problem "the job never started measuring"; return 1; fi
  done
  sleep 1  # a few runs in
}

# The job's ranks: processes of this binary descended from its launcher. Other jobs of the same binary on this machine
# (a user's run, another test) are never signalled or counted.
job_rank_pids() {
  local pid ancestor
  for pid in $(pgrep -f "^$BENCH "); do
    ancestor=$pid
    while [ -n "$ancestor" ] && [ "$ancestor" -gt 1 ]; do
      ancestor=$(ps -o ppid= -p "$ancestor" 2>/dev/null | tr -d ' ')
      if [ "$ancestor" = "$JOB_PID" ]; then echo "$pid"; break; fi
    done
  done
}
signal_rank() {  # signal rank
  kill -"$1" "$(rank_pid "$2")"
}
signal_ranks() {  # signal: to every rank
  local rank
  for rank in $(seq 0 "$VICTIM"); do kill -"$1" "$(rank_pid "$rank")"; done
}
signal_launcher() { kill -"$1" "$JOB_PID"; }

# Starts the job, hurts it with `fault...` once it measures, and waits for the launcher (wait_job) within `bound`.
# Returns 1 when the job never started measuring.
inject() {  # file bound fault...
  local file=$1 bound=$2
  shift 2
  start_job "$file" || return 1
  local since
  since=$(now)
  "$@"
  wait_job "$since" "$bound"
}

# ---- A rank killed (SIGKILL): the launcher ends the job; the file keeps the runs it had.
case_sigkill_rank() {
  local file="$WORK/sigkill.h5"
  inject "$file" 10 signal_rank KILL "$VICTIM" || { record "SIGKILL of rank $VICTIM" - - - -; return; }
  [ "$EXIT_STATUS" -ne 0 ] || problem "exit status 0"
  local kept
  kept=$(check_file "$file" some)
  record "SIGKILL of rank $VICTIM" "$EXIT_SECONDS" "$EXIT_STATUS" "$kept" "$(resume "$file")"
}

# ---- A rank stopped (SIGSTOP): its peers wait in a collective; the watchdog stops the job within timeout + 10 s.
case_sigstop_rank() {
  local file="$WORK/sigstop.h5"
  inject "$file" $((TIMEOUT + 10)) signal_rank STOP "$VICTIM" || { record "SIGSTOP of rank $VICTIM" - - - -; return; }
  expect_status 124
  expect_message "$WORK/job.err" "watchdog stopped the job: configuration '[^']+', run [0-9]+.*: rank $VICTIM@[^ ]+ made no progress; rank 0@[^ ]+ waited [0-9.]+ s for "
  expect_interrupted "$file" "^watchdog: rank $VICTIM@"
  local kept
  kept=$(check_file "$file" some)
  record "SIGSTOP of rank $VICTIM (--timeout $TIMEOUT)" "$EXIT_SECONDS" "$EXIT_STATUS" "$kept" "$(resume "$file")"
}

# ---- A rank stopped before the job's first run (MGPU_FAULT_STOP_BEFORE_CONFIGURATION=R:0): the others wait at the
# bounded barrier before the first configuration; the job ends within timeout + 10 s of its launch (its start-up on
# 2 cores is a second or two) with one line naming the rank, the file it had created is removed (nothing was measured)
# and --resume, given that name, measures the whole job.
case_sigstop_before_first_run() {
  local file="$WORK/sigstop_first.h5"
  rm -f "$file"
  local since
  since=$(now)
  "${LAUNCH[@]}" -x "MGPU_FAULT_STOP_BEFORE_CONFIGURATION=$VICTIM:0" "$BENCH" "${BASE_ARGS[@]}" --runs 3 \
    --output "$file" > "$WORK/job.out" 2> "$WORK/job.err" &
  JOB_PID=$!
  wait_job "$since" $((TIMEOUT + 10))
  expect_status 124
  expect_message "$WORK/job.err" "watchdog stopped the job: .*rank $VICTIM@[^ ]+ made no progress; rank 0@[^ ]+ waited [0-9.]+ s for every rank, to start configuration .*; nothing was measured yet; '[^']+' removed"
  [ ! -e "$file" ] || problem "the file was kept with nothing measured"
  record "SIGSTOP of rank $VICTIM before the first run" "$EXIT_SECONDS" "$EXIT_STATUS" 0 "$(resume "$file" --runs 3)"
}

# ---- A rank stopped in the set-up of a sweep's second configuration: before it (MGPU_FAULT_STOP_BEFORE_CONFIGURATION:
# the others wait at the bounded barrier before it), where it would join the communicator (MGPU_FAULT_STOP_BEFORE_ID:
# it never takes rank 0's unique id, and the others wait in the id's hand-over), or with the id in hand, before NCCL's
# initialisation (MGPU_FAULT_STOP_BEFORE_NCCL_INIT: the others wait inside the non-blocking init). The watchdog stops the job within
# timeout + 10 s with one line naming the rank and what rank 0 waited for, the first configuration complete in the
# file, and --resume measures the second.
case_sigstop_in_setup() {  # label hook(NAME=VALUE) waited-for(regex)
  local label=$1 hook=$2 waited_for=$3
  local file="$WORK/sigstop_setup.h5"
  local saved=("${BASE_ARGS[@]}") args=() previous="" first="" second=""
  for word in "${BASE_ARGS[@]}"; do  # the job's batch B becomes the sweep B,2B
    if [ "$previous" = --batch ]; then first=$word; second=$((word * 2)); word="$word,$second"; fi
    args+=("$word")
    previous=$word
  done
  BASE_ARGS=("${args[@]}")
  rm -f "$file"
  "${LAUNCH[@]}" -x "$hook" "$BENCH" "${BASE_ARGS[@]}" --runs 3 --output "$file" > "$WORK/job.out" 2> "$WORK/job.err" &
  JOB_PID=$!
  local waited=0
  until grep -q "# replicas after the runs" "$WORK/job.out" 2>/dev/null; do  # the first configuration is over
    sleep 0.1
    waited=$((waited + 1))
    if [ $waited -ge 1200 ] || ! kill -0 "$JOB_PID" 2>/dev/null; then problem "the first configuration never ended"; break; fi
  done
  local since
  since=$(now)
  wait_job "$since" $((TIMEOUT + 10))
  expect_status 124
  expect_message "$WORK/job.err" "watchdog stopped the job: configuration '[^']+_b${second}_[^']+': rank $VICTIM@[^ ]+ made no progress; rank 0@[^ ]+ waited [0-9.]+ s for $waited_for"
  local kept
  kept=$(check_file "$file" some complete)
  local resumed
  resumed=$(resume "$file" --runs 3)
  local name
  name=$(configuration_of "$file")
  local last="${name/_b${first}_/_b${second}_}"
  [ "$(attribute "$file" "$last" complete)" = 1 ] || problem "--resume did not complete the second configuration ($last)"
  BASE_ARGS=("${saved[@]}")
  record "$label" "$EXIT_SECONDS" "$EXIT_STATUS" "$kept" "$resumed"
}

# ---- SIGTERM/SIGINT: to the launcher (Ctrl-C, kill of mpirun) and to every rank (Slurm's time limit, scancel).
case_signal() {  # signal target(launcher|ranks)
  local signal=$1 target=$2
  local file="$WORK/${signal}_${target}.h5"
  local fault=(signal_launcher "$signal")
  [ "$target" = ranks ] && fault=(signal_ranks "$signal")
  inject "$file" 5 "${fault[@]}" || { record "SIG$signal to the $target" - - - -; return; }
  local number
  number=$(kill -l "$signal")
  # Every rank exits 128 + signal; Open MPI's mpirun, signalled itself, reports 1 for the job it was told to end,
  # and passes SIGINT on to the ranks as SIGTERM.
  local seen="SIG$signal"
  if [ "$target" = launcher ]; then
    expect_status $((128 + number)) 1
    seen="SIG($signal|TERM)"
  else
    expect_status $((128 + number))
  fi
  expect_message "$WORK/job.err" "mgpu_bench: stopped by $seen: configuration '[^']+', run [0-9]+.*; [0-9]+ completed runs? of '[^']+' kept in '.*', marked interrupted; --resume completes it"
  expect_interrupted "$file" "^$seen\$"
  local kept
  kept=$(check_file "$file" some)
  record "SIG$signal to the $target" "$EXIT_SECONDS" "$EXIT_STATUS" "$kept" "$(resume "$file")"
}

# ---- A full disk: a small tmpfs where mounting works, else a file-size limit on the ranks.
case_full_disk() {
  local mount_point="$WORK/small_disk"
  mkdir -p "$mount_point"
  local how
  local prefix=()
  # Room for the file and a few dozen runs of the CPU job: the job asks for more runs than fit.
  if mount -t tmpfs -o size=256k tmpfs "$mount_point" 2>/dev/null; then
    how="tmpfs 256 KiB"
  else
    # On the ranks only: the launcher's own shared-memory files would not fit either. SIGXFSZ ignored, so that a
    # write past the limit fails (EFBIG) as on a full disk instead of killing the rank.
    how="ulimit -f"
    prefix=(bash -c 'trap "" XFSZ; ulimit -f 256; exec "$@"' limit)
    mount_point="$WORK/limited_disk"
    mkdir -p "$mount_point"
  fi
  local file="$mount_point/full.h5"  # (set after the choice above)
  rm -f "$file"
  local since
  since=$(now)
  "${LAUNCH[@]}" "${prefix[@]}" "$BENCH" "${BASE_ARGS[@]}" --runs "$DISK_RUNS" --output "$file" > "$WORK/job.out" 2> "$WORK/job.err" &
  JOB_PID=$!
  wait_job "$since" 600
  expect_status 1
  if [ "$how" = "ulimit -f" ]; then  # the limit is not free space: the failed write itself is reported
    expect_message "$WORK/job.err" "mgpu_bench: error: '.*full.h5'.*; [0-9]+ completed runs of '[^']+' kept"
  else
    expect_message "$WORK/job.err" "mgpu_bench: error: '.*full.h5': the disk is full \([0-9]+ KiB free, the next run needs about [0-9]+ KiB\); [0-9]+ completed runs of '[^']+' kept"
    expect_interrupted "$file" "the disk is full"
  fi
  local kept
  kept=$(check_file "$file" some)
  # Resumed where there is room (as a user would after freeing space).
  cp "$file" "$WORK/full_resumed.h5"
  [ "$how" != "ulimit -f" ] && umount "$mount_point"
  record "full disk ($how)" "$EXIT_SECONDS (all)" "$EXIT_STATUS" "$kept" "$(resume "$WORK/full_resumed.h5" --runs "$DISK_RUNS")"
}

# ---- Damaged files: the analyzer and --resume refuse them in one line and change nothing.
expect_refusal() {  # file pattern command...
  local file=$1 pattern=$2
  shift 2
  local before
  before=$(md5sum < "$file")
  "$@" > "$WORK/refusal.out" 2> "$WORK/refusal.err"
  local status=$?
  [ $status -eq 1 ] || problem "$(basename "$1") exit status $status, expected 1"
  [ "$(wc -l < "$WORK/refusal.err")" -ge 1 ] || problem "$(basename "$1") said nothing"
  grep -m1 'mgpu_' "$WORK/refusal.err" | grep -qE "$pattern" || problem "$(basename "$1") message: $(head -1 "$WORK/refusal.err")"
  grep -q 'src/' "$WORK/refusal.err" && problem "$(basename "$1") message names internals: $(grep -m1 src/ "$WORK/refusal.err")"
  [ "$(md5sum < "$file")" = "$before" ] || problem "$(basename "$1") changed the file"
}

case_damaged_file() {  # kind(truncated|corrupted)
  local kind=$1
  local good="$WORK/good.h5"
  if [ ! -f "$good" ]; then
    "${LAUNCH[@]}" "$BENCH" "${BASE_ARGS[@]}" --runs 3 --output "$good" > /dev/null 2> "$WORK/good.err" ||
      { problem "the sample job failed: $(head -1 "$WORK/good.err")"; record "$kind file" - - - -; return; }
  fi
  local file="$WORK/$kind.h5"
  local pattern
  if [ "$kind" = truncated ]; then
    head -c 3000 "$good" > "$file"
    pattern="'$file' is truncated or not an mgpu_bench results file"
  else
    cp "$good" "$file"
    # One byte of is_warmup's only chunk (warm-up 1s then measured 0s, with its checksum after): the data changed,
    # the checksum did not.
    python3 - "$file" <<'EOF' || problem "could not find is_warmup's bytes to damage"
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
pattern = b"\x01\x01\x01" + b"\x00" * 17
at = data.find(pattern)
if at < 0:
    sys.exit(1)
data[at + 10] ^= 0x01
open(path, "wb").write(bytes(data))
EOF
    pattern="'$file' is corrupted or truncated"
  fi
  local since
  since=$(now)
  expect_refusal "$file" "$pattern" "$ANALYZE" report "$file"
  expect_refusal "$file" "$pattern" "${LAUNCH[@]}" "$BENCH" "${JOB_ARGS[@]}" --output "$file" --resume
  record "$kind file to mgpu_analyze and --resume" "$(seconds_since "$since")" 1 "-" "refused, file unchanged"
}

echo "# fault injection: ${DEVICE}, $RANKS ranks, --timeout ${TIMEOUT}, job: ${JOB_ARGS[*]}; files in $WORK" >&2
wanted() { [[ "$CASES" == *" $1 "* ]]; }
wanted sigkill && case_sigkill_rank
wanted sigstop && case_sigstop_rank
wanted sigstop-first && case_sigstop_before_first_run
wanted sigstop-setup && case_sigstop_in_setup "SIGSTOP of rank $VICTIM between configurations" \
  "MGPU_FAULT_STOP_BEFORE_CONFIGURATION=$VICTIM:1" "every rank, to start configuration"
wanted sigstop-id && case_sigstop_in_setup "rank $VICTIM never joins the communicator (stopped before the unique id)" \
  "MGPU_FAULT_STOP_BEFORE_ID=$VICTIM:1" "(rank 0's (NCCL )?unique id|every rank's hash of the (NCCL )?unique id)"
if wanted sigstop-nccl-init; then
  if [ "$DEVICE" = cuda ]; then
    case_sigstop_in_setup "rank $VICTIM never joins NCCL initialisation" \
      "MGPU_FAULT_STOP_BEFORE_NCCL_INIT=$VICTIM:1" "every rank to join NCCL initialisation"
  else
    echo "# sigstop-nccl-init skipped: the CPU fallback creates no NCCL communicator (MGPU_FAULT_DEVICE=cuda runs it)" >&2
  fi
fi
wanted term-launcher && case_signal TERM launcher
wanted int-launcher && case_signal INT launcher
wanted term-ranks && case_signal TERM ranks
wanted int-ranks && case_signal INT ranks
wanted full-disk && case_full_disk
wanted truncated && case_damaged_file truncated
wanted corrupted && case_damaged_file corrupted

print_table "fault injection ($DEVICE, $RANKS ranks, --timeout $TIMEOUT)"
exit $FAILED
