#!/usr/bin/env bash
# Purpose: `cmake --install BUILD --prefix P` gives a tree a cluster user runs from: both programs in P/bin answer
# --help, the launchers and their presets and the study files are in P/share/mgpu_bench, and the installed
# run-node.sh starts the installed mgpu_bench (a tiny CPU job, with a preset) whose file the installed mgpu_analyze
# reports on.
# Usage: install_tree_test.sh BUILD_DIR WORK_DIR
set -uo pipefail
build="${1:?BUILD_DIR}"
work="${2:?WORK_DIR}"
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAILED: $*"; exit 1; }

"${CMAKE:-cmake}" --install "$build" --prefix "$prefix" >"$work/install.txt" 2>&1 ||
  { cat "$work/install.txt"; fail "cmake --install"; }
share="$prefix/share/mgpu_bench"
for path in bin/mgpu_bench bin/mgpu_analyze share/mgpu_bench/launch/run-node.sh \
  share/mgpu_bench/launch/run-hostfile.sh share/mgpu_bench/launch/slurm/mgpu_bench.sbatch; do
  [[ -x "$prefix/$path" ]] || fail "$path is not installed as a program"
done
for path in launch/common.sh launch/presets/nvlink-default.env launch/presets/pcie-host-bridge.env bench/study.ini; do
  [[ -f "$share/$path" ]] || fail "share/mgpu_bench/$path is not installed"
done
[[ -e "$share/launch/build-and-run.sh" ]] && fail "the build scripts belong to the source tree, not the installed one"
"$prefix/bin/mgpu_bench" --help >"$work/bench_help.txt" 2>&1 && grep -q -- "--model" "$work/bench_help.txt" ||
  fail "the installed mgpu_bench --help"
"$prefix/bin/mgpu_analyze" --help >"$work/analyze_help.txt" 2>&1 && grep -q "report" "$work/analyze_help.txt" ||
  fail "the installed mgpu_analyze --help"

# No GPU for the launcher (an empty CUDA_VISIBLE_DEVICES), one CPU rank: the installed binary, found by common.sh.
cd "$work" || fail "cd $work"
CUDA_VISIBLE_DEVICES= MGPU_CPU_RANKS=1 "$share/launch/run-node.sh" --preset nvlink-default -- --device cpu \
  --model medium --batch 8 --warmup 1 --steps 2 --runs 2 --output "$work/tiny.h5" >"$work/run.txt" 2>&1
rc=$?
cat "$work/run.txt"
((rc == 0)) || fail "the installed run-node.sh exited $rc"
grep -q "$prefix/bin/mgpu_bench" "$work/run.txt" || fail "run-node.sh did not start the installed mgpu_bench"
"$prefix/bin/mgpu_analyze" report "$work/tiny.h5" >"$work/report.txt" 2>&1 || { cat "$work/report.txt"; fail "report"; }
grep -q "medium_b8_n1_cpu" "$work/report.txt" || fail "the report lacks the tiny job's configuration"
echo "PASSED: the installed tree runs"
