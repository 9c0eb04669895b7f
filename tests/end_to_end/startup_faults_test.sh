#!/usr/bin/env bash
# Purpose: the start-up fault matrix (docs/reliability.md): rank 0 and the last rank, each stopped (SIGSTOP) at its
# fork (before it runs mgpu_bench), in MPI start (before MPI_Init, where the others wait for it), during set-up (before
# the unique id's exchange) and as its first run starts, under mpirun or the launcher MGPU_FAULT_LAUNCH names (srun in
# the Slurm test), or stopped from outside S seconds after the launch (point after:S, wherever set-up then is). Each
# case must end within --timeout + 10 s of its launch with a non-zero status and one line naming
# a rank and what it waited in, leave no rank of the job alive, keep a readable file (or none, when nothing was
# measured), and --resume must then complete the job. Prints a table last; exits 1 when any case failed.
#
# Usage: tests/end_to_end/startup_faults_test.sh BIN_DIR [WORK_DIR]
#   MGPU_FAULT_DEVICE   cpu (default) or cuda;  MGPU_FAULT_RANKS  ranks of the job (default 2)
#   MGPU_FAULT_TIMEOUT  the job's --timeout (default 5);  MGPU_FAULT_ROWS  a file that also gets the table's rows
#   MGPU_FAULT_LAUNCH   the launch command for the ranks (default: MPIEXEC -n RANKS, with --oversubscribe on the CPU)
#   MGPU_FAULT_VICTIMS  the ranks to stop (default: 0 and the last)
#   MGPU_FAULT_POINTS   default: fork mpi-start setup first-run; after:S stops the victim S seconds after the launch
#   MGPU_H5PY_PYTHON    a python3 with h5py (else h5dump reads the files)
set -u

BIN_DIR=$(cd "${1:?usage: startup_faults_test.sh BIN_DIR [WORK_DIR]}" && pwd)
WORK=${2:-$(mktemp -d /tmp/mgpu_startup_faults_XXXXXX)}
mkdir -p "$WORK"
HERE=$(cd "$(dirname "$0")" && pwd)
BENCH="$BIN_DIR/mgpu_bench"
DEVICE=${MGPU_FAULT_DEVICE:-cpu}
TIMEOUT=${MGPU_FAULT_TIMEOUT:-5}
RANKS=${MGPU_FAULT_RANKS:-2}
PY=${MGPU_H5PY_PYTHON:-}
VICTIMS=${MGPU_FAULT_VICTIMS:-0 $((RANKS - 1))}
POINTS=${MGPU_FAULT_POINTS:-fork mpi-start setup first-run}
if [ -n "${MGPU_FAULT_LAUNCH:-}" ]; then
  read -r -a LAUNCH <<< "$MGPU_FAULT_LAUNCH"
else
  LAUNCH=("${MPIEXEC:-mpiexec}" -n "$RANKS")
  [ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)
  [ "$DEVICE" = cpu ] && LAUNCH+=(--oversubscribe)
fi
if [ "$DEVICE" = cpu ]; then
  BASE_ARGS=(--model medium --batch 32 --gpus "$RANKS" --warmup 3 --steps 17)
else
  BASE_ARGS=(--model large --batch 4096 --gpus "$RANKS" --warmup 3 --steps 17)
fi
BASE_ARGS+=(--device "$DEVICE" --timeout "$TIMEOUT")
JOB_ARGS=("${BASE_ARGS[@]}" --runs 3)
export OMPI_MCA_btl_vader_single_copy_mechanism=none NCCL_NVLS_ENABLE=0
[ -x "$BENCH" ] || { echo "startup_faults_test: $BENCH is missing" >&2; exit 2; }
source "$HERE/fault_common.sh"

# Every process of this job is marked in its environment, whatever starts it (mpirun's children, Slurm's tasks): a
# rank is a marked process the launcher gave a rank to. Nothing of another job is ever counted or signalled.
TAG="mgpu-startup-$$"
job_rank_pids() {
  local environ pid
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    tr '\0' '\n' 2>/dev/null < "$environ" | grep -qx "MGPU_FAULT_JOB=$TAG" || continue
    tr '\0' '\n' 2>/dev/null < "$environ" | grep -qE "^(OMPI_COMM_WORLD_RANK|SLURM_PROCID)=" && echo "$pid"
  done
}

# When a rank of the job is seen stopped (state T): the bound counts from there, after the set-up before the point.
stopped_since() {
  local pid
  while kill -0 "$JOB_PID" 2>/dev/null; do
    for pid in $(job_rank_pids); do
      case "$(ps -o stat= -p "$pid" 2>/dev/null)" in T*) now; return 0 ;; esac
    done
    sleep 0.05
  done
  now
  return 1
}

# The launcher's way to hand a variable to every rank: Open MPI's -x; srun passes the whole environment.
pass_variable() {  # NAME
  case "$(basename "${LAUNCH[0]}")" in mpirun | mpiexec | orterun) echo "-x $1" ;; esac
}

# One case: the job started with rank `victim` stopped at `point`; asserts the bound, the status, the line, the file,
# that no rank is left, and that --resume completes the job.
stop_case() {  # victim point
  local victim=$1 point=$2
  local file="$WORK/startup_${point/:/_}_${victim}.h5"
  local variable="" prefix=() line
  case "$point" in
    fork)
      variable=MGPU_STOP_AT_FORK
      prefix=(sh -c 'if [ "${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-}}" = "$MGPU_STOP_AT_FORK" ]; then kill -STOP $$; fi; exec "$@"' sh)
      line="watchdog stopped the job: rank [0-9]+@[^ ]+ was held [0-9.]+ s in MPI start \\(MPI_Init\\)" ;;
    mpi-start)
      variable=MGPU_FAULT_STOP_BEFORE_MPI_INIT
      line="watchdog stopped the job: rank [0-9]+@[^ ]+ was held [0-9.]+ s in MPI start \\(MPI_Init\\)" ;;
    setup)
      variable=MGPU_FAULT_STOP_BEFORE_ID
      line="watchdog stopped the job: .*rank $victim@[^ ]+ made no progress; rank [0-9]+@[^ ]+ waited [0-9.]+ s for .*unique id" ;;
    first-run)
      variable=MGPU_FAULT_STOP_IN_RUN
      line="watchdog stopped the job: configuration '[^']+', run 0.*: rank $victim@[^ ]+ made no progress; rank [0-9]+@[^ ]+ waited [0-9.]+ s for " ;;
    after:*)
      variable=MGPU_FAULT_UNUSED
      line="watchdog stopped the job: .*(rank $victim@[^ ]+ made no progress;|was held [0-9.]+ s in )" ;;
    *) echo "startup_faults_test: unknown point '$point'" >&2; exit 2 ;;
  esac
  local value="$victim:0"
  [ "$point" = fork ] && value=$victim
  rm -f "$file"
  local since
  since=$(now)
  # shellcheck disable=SC2046  # pass_variable gives zero or two words
  env MGPU_FAULT_JOB="$TAG" "$variable=$value" "${LAUNCH[@]}" $(pass_variable "$variable") $(pass_variable MGPU_FAULT_JOB) \
    "${prefix[@]}" "$BENCH" "${JOB_ARGS[@]}" --output "$file" > "$WORK/job.out" 2> "$WORK/job.err" &
  JOB_PID=$!
  if [[ "$point" == after:* ]]; then
    sleep "${point#after:}"
    local pid
    pid=$(rank_pid "$victim")
    if [ -n "$pid" ]; then kill -STOP "$pid"; else problem "rank $victim not found to stop"; fi
    since=$(now)
  else
    since=$(stopped_since) || problem "no rank of the job stopped"
  fi
  wait_job "$since" $((TIMEOUT + 10))
  [ "$EXIT_STATUS" -ne 0 ] || problem "exit status 0"
  expect_message "$WORK/job.err" "$line"
  [ "$(grep -c '^mgpu_bench: ' "$WORK/job.err")" = 1 ] || problem "not one line: $(grep '^mgpu_bench: ' "$WORK/job.err" | head -3)"
  local kept=0
  [ -e "$file" ] && kept=$(check_file "$file" 0)
  cp "$WORK/job.err" "$WORK/job_${point/:/_}_${victim}.err"
  record "rank $victim stopped at $point" "$EXIT_SECONDS" "$EXIT_STATUS" "$kept" "$(resume "$file")"
}

echo "# start-up faults: $DEVICE, $RANKS ranks, --timeout $TIMEOUT, launcher ${LAUNCH[*]}; files in $WORK" >&2
for victim in $VICTIMS; do
  for point in $POINTS; do stop_case "$victim" "$point"; done
done
print_table "start-up faults ($DEVICE, $RANKS ranks, --timeout $TIMEOUT, ${LAUNCH[0]})"
exit $FAILED
