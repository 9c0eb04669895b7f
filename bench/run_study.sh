#!/usr/bin/env bash
# Purpose: the final study runs on one GPU node: the study's grid (bench/study.ini: 20 configurations, 50 runs each)
# once per environment preset (pcie-host-bridge: the study's NCCL settings; nvlink-default: NCCL's own), one rank
# per GPU through launch/run-node.sh, each into its own results file, resumable (--resume: a rerun after an
# interruption continues where it stopped). Prints each preset's wall time and checks every file with h5py last.
# Usage: bench/run_study.sh OUT_DIR [MGPU_BENCH_ARGS...]     e.g. bench/run_study.sh /tmp/study
#   rehearsal: bench/run_study.sh /tmp/rehearsal --runs 3   (another OUT_DIR: a resumed file must match its command)
# Environment: STUDY (default bench/study.ini), PRESETS (default "pcie-host-bridge nvlink-default"), MGPU_BENCH.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:?usage: $0 OUT_DIR [MGPU_BENCH_ARGS...]}"; shift
study="${STUDY:-$root/bench/study.ini}"
presets=(${PRESETS:-pcie-host-bridge nvlink-default})
# The first python3 with h5py (Debian's /usr/bin/python3 here; the GPU machines' own python3 there).
python=""
for candidate in /usr/bin/python3 "$(command -v python3)"; do
  [[ -x "$candidate" ]] && "$candidate" -c "import h5py" 2>/dev/null && { python="$candidate"; break; }
done
mkdir -p "$out"
status=0
walls=()
for preset in "${presets[@]}"; do
  file="$out/study-$preset.h5"
  log="$out/study-$preset.log"
  start=$(date +%s.%N)
  "$root/launch/run-node.sh" --preset "$preset" --config "$study" --output "$file" --resume "$@" >"$log" 2>&1 ||
    { echo "FAILED: preset $preset (see $log)"; tail -n 5 "$log"; status=1; }
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  walls+=("$preset: ${wall} s wall ($file)")
done
for preset in "${presets[@]}"; do
  echo "=== $preset: sweep table (mean over runs; speedup = throughput(2 GPUs) / throughput(1 GPU))"
  sed -n '/^# sweep: mean over runs/,$p' "$out/study-$preset.log"
  if [[ -z "$python" ]]; then echo "h5py check skipped: no python3 with h5py"; continue; fi
  "$python" "$root/tests/end_to_end/check_results_h5py.py" "$out/study-$preset.h5" --expect-complete --expect-preset "$preset" \
    >"$out/check-$preset.txt" 2>&1 && echo "h5py check: ok" || { echo "h5py check FAILED:"; cat "$out/check-$preset.txt"; status=1; }
done
echo "=== wall time per preset"
printf '%s\n' "${walls[@]}"
exit $status
