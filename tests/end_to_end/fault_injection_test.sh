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

ROWS=()
FAILED=0
now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The case's verdict: every assertion appended to PROBLEMS.
PROBLEMS=""
problem() { PROBLEMS+="${PROBLEMS:+; }$*"; }
record() {  # case, exit time, status, runs kept, resume
  local verdict=PASS
  if [ -n "$PROBLEMS" ]; then verdict="FAIL: $PROBLEMS"; FAILED=1; fi
  ROWS+=("$1|$2|$3|$4|$5|$verdict")
  [ -n "${MGPU_FAULT_ROWS:-}" ] && echo "$1|$2|$3|$4|$5|$verdict" >> "$MGPU_FAULT_ROWS"
  echo "# $1: $verdict" >&2
  PROBLEMS=""
}

# The file's first configuration, and one of its attributes, with the HDF5 tools, or through h5py where they are
# missing (the GPU machines have h5py and no h5dump).
if command -v h5ls > /dev/null && command -v h5dump > /dev/null; then
  configuration_of() { h5ls "$1/configurations" 2>/dev/null | awk 'NR == 1 { print $1 }'; }
  attribute() {  # file configuration name -> value (numbers and strings)
    h5dump -a "/configurations/$2/$3" "$1" 2>/dev/null | sed -n 's/^ *(0): //p' | tr -d '"' | head -1
  }
elif [ -n "$PY" ]; then
  configuration_of() {
    "$PY" -c 'import h5py, sys; print(sorted(h5py.File(sys.argv[1], "r")["configurations"])[0])' "$1" 2>/dev/null
  }
  attribute() {
    "$PY" - "$@" 2>/dev/null <<'PYTHON'
import h5py, sys
value = h5py.File(sys.argv[1], "r")["configurations"][sys.argv[2]].attrs[sys.argv[3]]
value = value.decode() if isinstance(value, bytes) else value
print(value.item() if hasattr(value, "item") else value)
PYTHON
  }
else
  echo "fault_injection_test: needs h5ls and h5dump, or MGPU_H5PY_PYTHON (a python3 with h5py), to read results" >&2
  exit 2
fi

# The file opens with h5py (or h5dump) and holds `runs` runs; prints the run count.
check_file() {  # file expected_runs [complete]
  local file=$1 runs=$2 complete=${3:-}
  local name
  name=$(configuration_of "$file")
  if [ -z "$name" ]; then problem "$file: no configuration readable"; echo 0; return; fi
  local kept
  kept=$(attribute "$file" "$name" runs_completed)
  if [ -n "$PY" ]; then
    local flags=(--expect-runs "$kept")
    [ -n "$complete" ] && flags+=(--expect-complete)
    "$PY" "$HERE/check_results_h5py.py" "$file" "${flags[@]}" > "$WORK/h5py.txt" 2>&1 ||
      problem "h5py check: $(tail -1 "$WORK/h5py.txt")"
  fi
  if [ "$runs" = "some" ]; then
    [ "${kept:-0}" -ge 1 ] 2>/dev/null || problem "no completed run kept"
  elif [ "${kept:-x}" != "$runs" ]; then
    problem "runs_completed ${kept:-?}, expected $runs"
  fi
  echo "${kept:-0}"
}

# --resume with the job's options: must exit 0 with the configuration complete.
resume() {  # file [--runs R] -> "completed (N runs)" or "failed"
  local file=$1
  shift
  local args=("${JOB_ARGS[@]}")
  [ $# -gt 0 ] && args=("${BASE_ARGS[@]}" "$@")
  "${LAUNCH[@]}" "$BENCH" "${args[@]}" --output "$file" --resume > "$WORK/resume.out" 2> "$WORK/resume.err"
  local status=$?
  local name
  name=$(configuration_of "$file")
  local runs complete
  runs=$(attribute "$file" "$name" runs_completed)
  complete=$(attribute "$file" "$name" complete)
  if [ $status -ne 0 ] || [ "$complete" != 1 ]; then
    problem "--resume exited $status, complete=${complete:-?}: $(head -1 "$WORK/resume.err")"
    echo "failed"
  else
    check_file "$file" "$runs" complete > /dev/null
    echo "completed ($runs runs)"
  fi
}

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
JOB_RANKS=()
remember_ranks() {  # adds the job's live ranks to JOB_RANKS (orphaned ranks have lost their launcher: seen early)
  local pid known
  for pid in $(job_rank_pids); do
    known=0
    for known_pid in "${JOB_RANKS[@]}"; do [ "$known_pid" = "$pid" ] && known=1; done
    [ $known = 1 ] || JOB_RANKS+=("$pid")
  done
}

rank_pid() {  # rank -> pid of that rank of the job
  local pid
  remember_ranks
  for pid in "${JOB_RANKS[@]}"; do
    if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$pid"
      return
    fi
  done
}

# Waits for the launcher; sets EXIT_STATUS and EXIT_SECONDS (from `since`). Kills what is left after `bound` + 30 s.
wait_job() {  # since bound
  local since=$1 bound=$2
  local limit=$(( ${bound%.*} + 30 ))
  local ticks=0
  remember_ranks
  while kill -0 "$JOB_PID" 2>/dev/null && [ $ticks -lt $((limit * 10)) ]; do
    sleep 0.1
    ticks=$((ticks + 1))
    [ $((ticks % 10)) = 0 ] && remember_ranks
  done
  if kill -0 "$JOB_PID" 2>/dev/null; then
    problem "still running after ${limit} s"
    kill -KILL "$JOB_PID" 2>/dev/null
  fi
  wait "$JOB_PID" 2>/dev/null
  EXIT_STATUS=$?
  EXIT_SECONDS=$(seconds_since "$since")
  awk -v t="$EXIT_SECONDS" -v b="$bound" 'BEGIN { exit !(t <= b) }' || problem "exit took ${EXIT_SECONDS} s, bound ${bound} s"
  # No rank may outlive its job (a stopped one included).
  local pid
  for pid in "${JOB_RANKS[@]}"; do
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "^$BENCH " || continue
    problem "rank pid $pid outlived the job"
    kill -CONT "$pid" 2>/dev/null
    kill -KILL "$pid" 2>/dev/null
  done
  JOB_RANKS=()
}

expect_status() {  # allowed statuses...
  local s
  for s in "$@"; do [ "$EXIT_STATUS" = "$s" ] && return; done
  problem "exit status $EXIT_STATUS, expected $*"
}

expect_message() {  # file pattern
  grep -qE "$2" "$1" || problem "no message matching '$2' (got: $(grep -m1 mgpu_bench "$1"))"
}

expect_interrupted() {  # file pattern
  local name
  name=$(configuration_of "$1")
  local reason
  reason=$(attribute "$1" "$name" interrupted)
  echo "$reason" | grep -qE "$2" || problem "interrupted is '${reason}', expected '$2'"
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

printf '\n# fault injection (%s, %s ranks, --timeout %s)\n' "$DEVICE" "$RANKS" "$TIMEOUT"
printf '%-42s %8s %7s %6s  %-24s %s\n' "case" "exit s" "status" "runs" "--resume" "verdict"
for row in "${ROWS[@]}"; do
  IFS='|' read -r name seconds status runs resumed verdict <<< "$row"
  printf '%-42s %8s %7s %6s  %-24s %s\n' "$name" "$seconds" "$status" "$runs" "$resumed" "$verdict"
done
exit $FAILED
