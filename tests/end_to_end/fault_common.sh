# Purpose: what the fault suites share (sourced by fault_injection_test.sh and startup_faults_test.sh): the case table
# and its verdicts, reading a results file (h5dump or h5py), --resume, waiting for a job within a bound with no rank
# left behind, and the assertions on its status and message. The sourcing script sets WORK, HERE, PY, BENCH, LAUNCH,
# BASE_ARGS, JOB_ARGS and JOB_PID, and defines job_rank_pids (the pids of the running job's ranks).
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
    if tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxE "(OMPI_COMM_WORLD_RANK|SLURM_PROCID)=$1"; then
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
    # A zombie is gone (only its parent has not reaped it); a rank stopped before it ran our binary counts too. A
    # launcher may return a moment before its daemon has reaped the ranks: a second's grace.
    alive() { case "$(ps -o stat= -p "$1" 2>/dev/null)" in "" | Z*) return 1 ;; esac; }
    for _ in $(seq 1 10); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" || continue
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


# The table of every case recorded; the suite's exit status.
print_table() {  # title
  printf '\n# %s\n' "$1"
  printf '%-42s %8s %7s %6s  %-24s %s\n' "case" "exit s" "status" "runs" "--resume" "verdict"
  for row in "${ROWS[@]}"; do
    IFS='|' read -r name seconds status runs resumed verdict <<< "$row"
    printf '%-42s %8s %7s %6s  %-24s %s\n' "$name" "$seconds" "$status" "$runs" "$resumed" "$verdict"
  done
  return $FAILED
}
