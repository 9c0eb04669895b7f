#!/usr/bin/env bash
# Purpose: two nodes on one machine, for real: two network namespaces joined by a veth pair (addresses of this test's
# own, traffic only between them), each process started in one with a host name of its own (a UTS namespace), and
# Open MPI over TCP between them, its daemons started on the other "node" through an rsh agent that enters that node's
# namespaces. Through launch/run-hostfile.sh the CPU fallback runs 1 and 2 ranks across the nodes; the results file
# must name both hosts in rank order (rank 0 on the first node of the hostfile, rank 1 on the second), pass its math
# check and replica check on both, and pass the h5py check. Then the second node's processes are killed in the middle
# of a job: the job must end (not hang) and keep its finished runs, and --resume must complete it.
# Usage: tests/end_to_end/two_node_cluster_test.sh BUILD_DIR   (exit 77 = skipped: not root, or no network namespaces)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
python="${MGPU_H5PY_PYTHON:-/usr/bin/python3}"

skip() { echo "SKIPPED: $*"; exit 77; }
[[ $EUID -eq 0 ]] || skip "network namespaces need root; run the suite as root (CI does)"
for tool in ip unshare mpirun; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (launch/install-deps.sh installs iproute2)"
done

tag="mgpu$$"
nodes=(node1 node2)
subnet="10.77.0"
tmp="$(mktemp -d /tmp/mgpu_two_nodes_XXXXXX)"
namespace() { echo "${tag}_$1"; }
cleanup() {
  local status=$?
  local node pids
  for node in "${nodes[@]}"; do
    pids="$(ip netns pids "$(namespace "$node")" 2>/dev/null || true)"
    [[ -z "$pids" ]] || kill -9 $pids 2>/dev/null || true
    ip netns delete "$(namespace "$node")" 2>/dev/null || true
    rm -rf "/etc/netns/$(namespace "$node")"
  done
  if ((status != 0)); then
    for log in "$tmp"/*.txt; do [[ -e "$log" ]] && { echo "--- $log"; tail -n 40 "$log"; }; done
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

# The nodes: a namespace each, its own /etc/hosts naming both (ip netns exec mounts /etc/netns/NAME/hosts over it).
ip netns add "$(namespace node1)" 2>/dev/null || skip "cannot create a network namespace here (ip netns add failed)"
ip netns add "$(namespace node2)"
for index in 0 1; do
  node="${nodes[$index]}"
  mkdir -p "/etc/netns/$(namespace "$node")"
  printf '127.0.0.1 localhost\n%s.1 node1\n%s.2 node2\n' "$subnet" "$subnet" >"/etc/netns/$(namespace "$node")/hosts"
done
ip link add "${tag}a" type veth peer name "${tag}b"
ip link set "${tag}a" netns "$(namespace node1)"
ip link set "${tag}b" netns "$(namespace node2)"
ip -n "$(namespace node1)" addr add "$subnet.1/24" dev "${tag}a"
ip -n "$(namespace node2)" addr add "$subnet.2/24" dev "${tag}b"
for node in "${nodes[@]}"; do
  ip -n "$(namespace "$node")" link set lo up
done
ip -n "$(namespace node1)" link set "${tag}a" up
ip -n "$(namespace node2)" link set "${tag}b" up

# Open MPI starts its daemon on another node with `AGENT HOST COMMAND...`, as with ssh: here the agent enters that
# node's namespaces and gives it its host name.
cat >"$tmp/agent.sh" <<EOF
#!/usr/bin/env bash
while [[ "\$1" == -* ]]; do shift; done
host="\$1"; shift
exec ip netns exec "${tag}_\$host" unshare --uts sh -c "hostname \$host; \$*"
EOF
chmod +x "$tmp/agent.sh"
printf 'node1 slots=1\nnode2 slots=1\n' >"$tmp/hostfile"

# on_node1 COMMAND...: runs a shell command as a process of node1 (where mpirun starts), with Open MPI told to use
# the agent and the test's subnet only.
on_node1() {
  ip netns exec "$(namespace node1)" unshare --uts env OMPI_MCA_plm_rsh_agent="$tmp/agent.sh" \
    OMPI_MCA_oob_tcp_if_include="$subnet.0/24" OMPI_MCA_btl_tcp_if_include="$subnet.0/24" OMPI_MCA_btl=self,tcp \
    MGPU_BENCH="$build/mgpu_bench" MGPU_PROGRESS=plain sh -c "hostname node1; $*"
}

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
echo PASSED
