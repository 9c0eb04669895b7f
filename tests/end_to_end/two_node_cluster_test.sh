#!/usr/bin/env bash
# Purpose: two nodes on one machine, for real: two network namespaces joined by a veth pair (addresses of this test's
# own, traffic only between them), each process of a node started in its namespace with a host name (UTS namespace)
# and an /etc/hosts of its own (mount namespace); the file system is shared, as a cluster's would be. Open MPI runs over TCP between them, its daemon started on
# the other node through an rsh agent that enters that node; Slurm runs a controller and one slurmd per node. Checked:
# through launch/run-hostfile.sh the CPU fallback on 1 and 2 ranks across the nodes (hosts in rank order, math and
# replica checks on both ranks, the h5py check); the second node's processes killed in the middle of a job end it
# (no hang) with its finished runs kept, and --resume completes it; an all-reduce sweep across the nodes records 2
# nodes of 1 rank, and predict --cluster 2x1 takes its 2-GPU all-reduce from that sweep; launch/slurm/mgpu_bench.sbatch
# submitted with `sbatch --nodes=2` through each of its launchers (mpirun, and srun --mpi=pmix where Slurm has it) completes with one
# rank on each node.
# Usage: tests/end_to_end/two_node_cluster_test.sh BUILD_DIR   (exit 77 = skipped: not root, or no network namespaces)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
python="${MGPU_H5PY_PYTHON:-/usr/bin/python3}"
export PATH="$PATH:/usr/sbin"

skip() { echo "SKIPPED: $*"; exit 77; }
[[ $EUID -eq 0 ]] || skip "network namespaces need root; run the suite as root (CI does)"
for tool in ip nsenter unshare mpirun; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (launch/install-deps.sh --tests installs iproute2)"
done

tag="mgpu$$"
nodes=(node1 node2)
subnet="10.77.0"
tmp="$(mktemp -d /tmp/mgpu_two_nodes_XXXXXX)"
chmod 700 "$tmp"
namespace() { echo "${tag}_$1"; }
cleanup() {
  local status=$?
  local node pids pidfile
  for pidfile in "$tmp"/*.pid; do
    [[ -s "$pidfile" ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  for node in "${nodes[@]}"; do
    pids="$(ip netns pids "$(namespace "$node")" 2>/dev/null || true)"
    [[ -z "$pids" ]] || kill -9 $pids 2>/dev/null || true
    ip netns delete "$(namespace "$node")" 2>/dev/null || true
  done
  if ((status != 0)); then
    for log in "$tmp"/*.txt "$tmp"/*.log; do [[ -e "$log" ]] && { echo "--- $log"; tail -n 40 "$log"; }; done
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The nodes: a network namespace each, joined by a veth pair, and the /etc/hosts both see.
ip netns add "$(namespace node1)" 2>/dev/null || skip "cannot create a network namespace here (ip netns add failed)"
ip netns add "$(namespace node2)"
ip link add "${tag}a" type veth peer name "${tag}b"
ip link set "${tag}a" netns "$(namespace node1)"
ip link set "${tag}b" netns "$(namespace node2)"
ip -n "$(namespace node1)" addr add "$subnet.1/24" dev "${tag}a"
ip -n "$(namespace node2)" addr add "$subnet.2/24" dev "${tag}b"
for node in "${nodes[@]}"; do ip -n "$(namespace "$node")" link set lo up; done
ip -n "$(namespace node1)" link set "${tag}a" up
ip -n "$(namespace node2)" link set "${tag}b" up
printf '127.0.0.1 localhost\n%s.1 node1\n%s.2 node2\n' "$subnet" "$subnet" >"$tmp/hosts"

# node.sh NODE COMMAND...: the shell command line COMMAND as a process of NODE: in its network namespace, with its
# host name and the test's /etc/hosts (a private mount: nothing outside the process sees it).
cat >"$tmp/node.sh" <<EOF
#!/usr/bin/env bash
node="\$1"; shift
exec nsenter --net="/run/netns/${tag}_\$node" unshare --mount --uts sh -c \
  "mount --bind '$tmp/hosts' /etc/hosts && hostname \$node && \$*"
EOF
# Open MPI starts its daemon on another node with `AGENT [OPTIONS] HOST COMMAND...`, as with ssh.
cat >"$tmp/agent.sh" <<EOF
#!/usr/bin/env bash
while [[ "\$1" == -* ]]; do shift; done
host="\$1"; shift
exec "$tmp/node.sh" "\$host" "\$*"
EOF
chmod +x "$tmp/node.sh" "$tmp/agent.sh"
printf 'node1 slots=1\nnode2 slots=1\n' >"$tmp/hostfile"
# Open MPI uses the agent and the test's subnet only.
export OMPI_MCA_plm_rsh_agent="$tmp/agent.sh" OMPI_MCA_oob_tcp_if_include="$subnet.0/24" \
  OMPI_MCA_btl_tcp_if_include="$subnet.0/24" OMPI_MCA_btl=self,tcp MGPU_BENCH="$build/mgpu_bench" MGPU_PROGRESS=plain
on_node1() { "$tmp/node.sh" node1 "$*"; }

# 1. A sweep of 1 and 2 ranks across the nodes.
on_node1 "timeout 120 '$root/launch/run-hostfile.sh' '$tmp/hostfile' -- --device cpu --model medium --batch 16 \
  --warmup 1 --steps 3 --runs 5 --output '$tmp/two.h5'" >"$tmp/sweep.txt" 2>&1
"$python" "$root/tests/end_to_end/check_results_h5py.py" "$tmp/two.h5" --expect-configurations 2 --expect-runs 6 \
  --expect-steps 4 --expect-complete
"$python" - "$tmp/two.h5" <<'EOF_PY'
import sys
import h5py
groups = h5py.File(sys.argv[1], "r")["configurations"]
hosts = {name: [str(h) for h in g.attrs["hosts"]] for name, g in groups.items()}
assert hosts == {"medium_b16_n1_cpu": ["node1"], "medium_b16_n2_cpu": ["node1", "node2"]}, hosts
two = groups["medium_b16_n2_cpu"].attrs
assert str(two["replica_check"]).startswith("identical on 2 ranks"), two["replica_check"]
assert str(two["math_check"]).startswith("passed") and len(two["math_check_errors"]) == 2, two["math_check"]
print("hosts by rank:", hosts)
EOF_PY
# Rank 0's unique id (the NCCL id's path; the CPU fallback's own 128 bytes) reached node2 intact.
grep -m 1 '^# unique id: 128-byte unique id from rank 0, identical on 2 ranks' "$tmp/sweep.txt" ||
  { echo "no checked unique id in the 2-rank banner:"; cat "$tmp/sweep.txt"; exit 1; }

# The all-reduce sweep across the nodes records where it ran (2 nodes of 1 rank; the CPU fallback reports no NIC),
# and predict on a cluster of 2 x 1 takes the 2-GPU all-reduce from that sweep, not from the model.
on_node1 "timeout 120 '$root/launch/run-hostfile.sh' '$tmp/hostfile' -- allreduce --device cpu --max-bytes 1M \
  --model medium --runs 2 --iters 5 --warmup 1 --output '$tmp/allreduce.h5'" >"$tmp/allreduce.txt" 2>&1
"$python" "$root/tests/end_to_end/check_results_h5py.py" "$tmp/allreduce.h5"
"$python" - "$tmp/allreduce.h5" <<'EOF_PY'
import sys
import h5py
g = h5py.File(sys.argv[1], "r")["allreduce"].attrs
placement = (int(g["nodes"]), int(g["gpus_per_node"]), int(g["nics_per_node"]))
assert placement == (2, 1, 0), placement
assert str(g["network"]).startswith("MPI_Allreduce (CPU fallback)"), g["network"]
print("all-reduce sweep: %d nodes of %d rank, network: %s" % (placement[0], placement[1], g["network"]))
EOF_PY
"$build/mgpu_analyze" predict --probe "$root/bench/results/h200x4-2026-11-28c/probe.h5" --allreduce "$tmp/allreduce.h5" \
  --model medium --batch 64 --cluster 2x1 --link ib400 --format json >"$tmp/predict.json"
"$python" - "$tmp/predict.json" <<'EOF_PY'
import json
import sys
tables = json.load(open(sys.argv[1]))["tables"]
two = [r for r in tables["cluster_allreduce"]["rows"] if r["gpus"] == 2]
assert len(two) == 1 and two[0]["layout"] == "2 nodes x 1 GPU, 1 NIC per node", two
assert two[0]["source"] == "measured: the sweep on this layout", two[0]
step = [r for r in tables["prediction"]["rows"] if r["gpus"] == 2]
assert step and step[0]["allreduce_source"] != "estimated", step
print("predict on 2 x 1: the 2-GPU all-reduce from the sweep,", two[0]["allreduce_ms"], "ms")
EOF_PY

# 2. The second node's processes killed during the 2-rank configuration's runs: the job ends within its bound and
# keeps its finished runs; --resume completes it.
on_node1 "timeout 120 '$root/launch/run-hostfile.sh' '$tmp/hostfile' -- --device cpu --model medium --batch 16 \
  --gpus 2 --warmup 1 --steps 200 --runs 40 --output '$tmp/killed.h5'" >"$tmp/killed.txt" 2>&1 &
job=$!
for _ in $(seq 1 600); do
  grep -q '^ *2 ' "$tmp/killed.txt" 2>/dev/null && break
  sleep 0.1
done
grep -q '^ *2 ' "$tmp/killed.txt" || { echo "the 2-rank job did not reach its third run"; exit 1; }
kill -9 $(ip netns pids "$(namespace node2)")
killed_at=$SECONDS
status=0
wait "$job" || status=$?
((status != 0 && status != 124)) || { echo "the job exited $status after node2 was killed (expected a failure, not a hang)"; exit 1; }
((SECONDS - killed_at <= 30)) || { echo "the job took $((SECONDS - killed_at)) s to end after node2 was killed"; exit 1; }
echo "node2 killed: the job ended with status $status after $((SECONDS - killed_at)) s:" \
  "$(grep -m 1 -iE 'lost|abort|orte|signal' "$tmp/killed.txt" || true)"
"$python" - "$tmp/killed.h5" <<'EOF_PY'
import sys
import h5py
g = h5py.File(sys.argv[1], "r")["configurations"]["medium_b16_n2_cpu"].attrs
assert int(g["complete"]) == 0 and int(g["runs_completed"]) >= 3, (g["complete"], g["runs_completed"])
print("kept:", g["runs_completed"], "runs, interrupted:", repr(g["interrupted"]))
EOF_PY
on_node1 "timeout 120 '$root/launch/run-hostfile.sh' '$tmp/hostfile' -- --device cpu --model medium --batch 16 \
  --gpus 2 --warmup 1 --steps 200 --runs 40 --max-time 1 --output '$tmp/killed.h5' --resume" >"$tmp/resumed.txt" 2>&1 || {
  echo "--resume after node2 was killed failed"; exit 1; }
"$python" - "$tmp/killed.h5" <<'EOF_PY'
import sys
import h5py
g = h5py.File(sys.argv[1], "r")["configurations"]["medium_b16_n2_cpu"].attrs
assert int(g["complete"]) == 1 and int(g["attempt"]) == 2, (g["complete"], g["attempt"])
assert [str(h) for h in g["hosts"]] == ["node1", "node2"], g["hosts"]
print("resumed: attempt", g["attempt"], "runs", g["runs_completed"])
EOF_PY

# 3. Slurm over the two nodes: slurmctld and a slurmd on node1, a slurmd on node2, munge with a key of the test's
# own; the batch script submitted for 2 nodes through each launcher it offers.
for tool in slurmctld slurmd sbatch squeue scontrol sinfo munged mungekey; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool is not installed: Slurm over two nodes not tested"; echo PASSED; exit 0; }
done
source "$root/tests/end_to_end/slurm_test_cluster.sh"
start_munge "$tmp"
mkdir -p "$tmp/state" "$tmp/job"
cat >"$tmp/slurm.conf" <<CONF
# Two nodes of one machine (tests/end_to_end/two_node_cluster_test.sh): no cgroups, no accounting, root daemons.
ClusterName=mgpuci2
SlurmctldHost=node1($subnet.1)
$(slurm_conf_common "$tmp")
SlurmdSpoolDir=$tmp/spool_%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd_%n.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd_%n.log
NodeName=node1 NodeAddr=$subnet.1 CPUs=1 State=UNKNOWN
NodeName=node2 NodeAddr=$subnet.2 CPUs=1 State=UNKNOWN
PartitionName=ci Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
# Each node's configuration differs in its TmpFS alone: the nodes share one file system, and srun's PMIx makes its
# per-step directory under TmpFS with a name that does not say which node it is for.
for node in "${nodes[@]}"; do
  mkdir -p "$tmp/tmp_$node"
  { cat "$tmp/slurm.conf"; echo "TmpFS=$tmp/tmp_$node"; } >"$tmp/slurm_$node.conf"
done
export SLURM_CONF="$tmp/slurm_node1.conf"
on_node1 "slurmctld -i -f '$SLURM_CONF'"
for node in "${nodes[@]}"; do "$tmp/node.sh" "$node" "slurmd -N $node -f '$tmp/slurm_$node.conf'"; done
for _ in $(seq 1 60); do
  [[ "$(on_node1 "sinfo -h -o %T" 2>/dev/null | sort -u)" == idle ]] && break
  sleep 1
done
[[ "$(on_node1 "sinfo -h -o %T" 2>/dev/null | sort -u)" == idle ]] || { echo "the nodes never became idle"; exit 1; }

slurm_job() {
  local launcher="$1" out="$tmp/job/slurm-$1.h5" id state waited=0
  id="$(on_node1 "cd '$root' && sbatch --parsable --nodes=2 --ntasks-per-node=1 --output='$tmp/job/$launcher-%j.txt' \
    --export=ALL,MGPU_LAUNCHER=$launcher launch/slurm/mgpu_bench.sbatch --device cpu --model medium --batch 16 \
    --gpus 2 --warmup 1 --steps 3 --runs 5 --output '$out'")"
  while on_node1 "squeue -h -j $id" 2>/dev/null | grep -q .; do
    ((waited < 120)) || { echo "Slurm job $id ($launcher) still queued or running after 120 s"; exit 1; }
    sleep 1; waited=$((waited + 1))
  done
  state="$(on_node1 "scontrol show job $id" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)"
  [[ "$state" == COMPLETED ]] || { echo "Slurm job $id ($launcher) ended $state"; cat "$tmp"/job/"$launcher"-*.txt; exit 1; }
  "$python" - "$out" <<'EOF_PY'
import sys
import h5py
g = h5py.File(sys.argv[1], "r")["configurations"]["medium_b16_n2_cpu"].attrs
assert int(g["complete"]) == 1 and [str(h) for h in g["hosts"]] == ["node1", "node2"], (g["complete"], g["hosts"])
EOF_PY
  echo "Slurm job $id over node1 and node2 through $launcher: $state after $waited s"
}
slurm_job mpirun
if on_node1 "srun --mpi=list" 2>&1 | grep -qw pmix; then slurm_job srun; else echo "this Slurm has no mpi/pmix: srun not tested"; fi
echo PASSED
