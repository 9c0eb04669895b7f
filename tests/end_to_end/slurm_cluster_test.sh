#!/usr/bin/env bash
# Purpose: the Slurm path for real: a one-node Slurm cluster on localhost (Debian's slurm-wlm and munge; slurmctld,
# slurmd and munged as root with their own key, socket, ports, state and logs in a temporary directory), the batch
# script launch/slurm/mgpu_bench.sbatch submitted with the smoke study on the CPU fallback through each launcher it
# offers (srun --mpi=pmix, mpirun), and every results file checked with h5py alone; then the start-up fault matrix
# (startup_faults_test.sh) under srun. The daemons are stopped by their
# pid files on every exit, so none outlive the test.
# Usage: tests/end_to_end/slurm_cluster_test.sh BUILD_DIR   (exit 77 = skipped: not root, or Slurm/munge not installed)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
python="${MGPU_H5PY_PYTHON:-/usr/bin/python3}"
source "$root/tests/end_to_end/slurm_test_cluster.sh"
timeout_s="${MGPU_SLURM_TIMEOUT:-240}"

skip() { echo "SKIPPED: $*"; exit 77; }
[[ $EUID -eq 0 ]] || skip "the daemons run as root here; run the suite as root (CI does)"
for tool in slurmctld slurmd sbatch squeue scontrol sinfo munged mungekey; do
  command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin" command -v "$tool" >/dev/null 2>&1 ||
    skip "$tool is not installed (launch/install-deps.sh --tests installs slurmctld slurmd slurm-client munge)"
done
export PATH="$PATH:/usr/sbin"

tmp="$(mktemp -d /tmp/mgpu_slurm_XXXXXX)"
chmod 700 "$tmp"
stop_daemons() {
  local status=$?
  local pidfile pid
  # A job still running (a failure or a timeout) is cancelled while slurmctld can still do it, so no slurmstepd or
  # rank of ours outlives the daemons.
  if [[ -s "$tmp/jobs" ]] && [[ -s "$tmp/slurmctld.pid" ]]; then
    scancel $(cat "$tmp/jobs") 2>/dev/null || true
    for _ in $(seq 1 100); do squeue -h -j "$(paste -sd, "$tmp/jobs")" 2>/dev/null | grep -q . || break; sleep 0.1; done
  fi
  for pidfile in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munged.pid; do
    [[ -s "$pidfile" ]] || continue
    pid="$(cat "$pidfile")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if ((status != 0)); then
    echo "--- logs (exit status $status)"
    for log in "$tmp"/*.log "$tmp"/job/*.out; do [[ -f "$log" ]] && { echo "=== $log"; tail -n 40 "$log"; }; done
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap stop_daemons EXIT
trap 'exit 130' INT TERM

# Two free TCP ports for slurmctld and slurmd (another test or cluster may hold the defaults).
read -r ctld_port slurmd_port < <("$python" -c '
import socket
sockets = [socket.socket() for _ in range(2)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')

# munge with its own key and socket: nothing of a system munged is used or disturbed.
start_munge "$tmp"

node="$(hostname -s)"
cpus="$(nproc)"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/job"
cat > "$tmp/slurm.conf" <<CONF
# Minimal one-node cluster for tests/end_to_end/slurm_cluster_test.sh: no cgroups, no accounting, root daemons.
ClusterName=mgpuci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
$(slurm_conf_common "$tmp")
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -i -f "$SLURM_CONF"
slurmd -N "$node" -f "$SLURM_CONF"
ready=""
for _ in $(seq 1 60); do
  state="$(sinfo -h -n "$node" -o %T 2>/dev/null || true)"
  [[ "$state" == idle* ]] && { ready=1; break; }
  sleep 1
done
[[ -n "$ready" ]] || { echo "the node never became idle (state '${state:-}')"; sinfo -N -l || true; exit 1; }
echo "# Slurm $(sinfo -V) on $node: ctld port $ctld_port, slurmd port $slurmd_port; srun --mpi=list: $(srun --mpi=list 2>&1 | tr -s '\n ' ' ')"

# Submits the batch script with the smoke study and waits for it (bounded); checks the state and the results file.
run_job() {
  local launcher="$1" out="$tmp/job/smoke-$1.h5"
  local id
  id=$(cd "$root" && sbatch --parsable --ntasks=2 --chdir="$root" --output="$tmp/job/slurm-$launcher-%j.out" \
    --export=ALL,MGPU_BENCH="$build/mgpu_bench",MGPU_LAUNCHER="$launcher",MGPU_PRESET=nvlink-default \
    launch/slurm/mgpu_bench.sbatch --config bench/smoke.ini --device cpu --output "$out")
  echo "$id" >> "$tmp/jobs"
  echo "# submitted job $id (launcher $launcher)"
  local waited=0
  while squeue -h -j "$id" 2>/dev/null | grep -q .; do
    ((waited < timeout_s)) || { echo "job $id still queued or running after ${timeout_s}s"; scontrol show job "$id"; exit 1; }
    sleep 1; waited=$((waited + 1))
  done
  local state
  state="$(scontrol show job "$id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)"
  echo "# job $id: $state after ${waited}s"
  cat "$tmp"/job/slurm-"$launcher"-"$id".out | grep -E "^# (mgpu_bench.sbatch|srun|mpirun|sweep)" || true
  [[ "$state" == COMPLETED ]] || { echo "job $id ended $state"; cat "$tmp"/job/slurm-"$launcher"-"$id".out; exit 1; }
  grep -q "launcher $launcher" "$tmp"/job/slurm-"$launcher"-"$id".out || { echo "the job did not use $launcher"; exit 1; }
  "$python" "$root/tests/end_to_end/check_results_h5py.py" "$out" --expect-configurations 6 --expect-runs 3 --expect-steps 5 \
    --expect-complete --expect-preset nvlink-default
}

if srun --mpi=list 2>&1 | grep -qw pmix; then run_job srun; else echo "# this Slurm offers no mpi/pmix: srun not tested"; fi
run_job mpirun

# The start-up fault matrix under srun as the batch script starts it (--kill-on-bad-exit): a stopped rank must not
# hold the allocation (startup_faults_test.sh).
if srun --mpi=list 2>&1 | grep -qw pmix; then
  MGPU_FAULT_LAUNCH="srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=2" MGPU_H5PY_PYTHON="$python" \
    bash "$root/tests/end_to_end/startup_faults_test.sh" "$build" "$tmp/startup_faults"
fi
echo "PASSED"
