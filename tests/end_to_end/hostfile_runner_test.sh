#!/usr/bin/env bash
# Purpose: launch/run-hostfile.sh for real with hostfiles/localhost: the smoke study on the CPU fallback on 2 ranks
# with the nvlink-default preset, its results file checked with h5py alone (preset recorded, NCCL_NVLS_ENABLE=0), and
# no process of the run left behind. The caller's NCCL_ALGO (a choice the preset makes) is dropped; the caller's
# NCCL_SOCKET_IFNAME (the network, which a preset cannot know) is forwarded to every rank and recorded.
# Usage: tests/end_to_end/hostfile_runner_test.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
python="${MGPU_H5PY_PYTHON:-/usr/bin/python3}"
tmp="$(mktemp -d /tmp/mgpu_hostfile_XXXXXX)"
runner_pid=""
cleanup() {
  local status=$?
  # The runner execs mpirun: ending it ends its ranks (only ours: by the pid we started).
  if [[ -n "$runner_pid" ]] && kill -0 "$runner_pid" 2>/dev/null; then kill "$runner_pid" 2>/dev/null || true; fi
  ((status == 0)) || { echo "--- run log"; cat "$tmp/run.txt" 2>/dev/null || true; }
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT

NCCL_ALGO=Ring NCCL_SOCKET_IFNAME=lo MGPU_BENCH="$build/mgpu_bench" timeout 300 "$root/launch/run-hostfile.sh" "$root/hostfiles/localhost" \
  --preset nvlink-default -- --config "$root/bench/smoke.ini" --device cpu --output "$tmp/smoke.h5" \
  > "$tmp/run.txt" 2>&1 &
runner_pid=$!
wait "$runner_pid"
runner_pid=""
grep -q -- "--hostfile $root/hostfiles/localhost -np 2" "$tmp/run.txt" || { echo "the runner did not use the hostfile's 2 slots"; exit 1; }
"$python" "$root/tests/end_to_end/check_results_h5py.py" "$tmp/smoke.h5" --expect-configurations 6 --expect-runs 3 \
  --expect-steps 5 --expect-complete --expect-preset nvlink-default
# A preset replaces the caller's NCCL choices: the caller's NCCL_ALGO must not be recorded.
if "$python" -c 'import h5py, sys; g = h5py.File(sys.argv[1])["configurations"]; sys.exit(any(any("NCCL_ALGO" in v for v in c.attrs["nccl_environment"]) for c in g.values()))' "$tmp/smoke.h5"; then :; else
  echo "a NCCL_ALGO from outside the preset was recorded"; exit 1
fi
# It keeps the caller's network: forwarded to every rank (-x) and recorded by every configuration.
grep -q -- "-x NCCL_SOCKET_IFNAME" "$tmp/run.txt" || { echo "NCCL_SOCKET_IFNAME was not forwarded to the ranks"; exit 1; }
if "$python" -c 'import h5py, sys; g = h5py.File(sys.argv[1])["configurations"]; sys.exit(not all(any("NCCL_SOCKET_IFNAME=lo" in v for v in c.attrs["nccl_environment"]) for c in g.values()))' "$tmp/smoke.h5"; then :; else
  echo "the caller's NCCL_SOCKET_IFNAME was not kept by the preset"; exit 1
fi
echo PASSED
