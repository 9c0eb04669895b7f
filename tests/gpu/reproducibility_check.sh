#!/usr/bin/env bash
# Purpose: whether the same command gives the same answer: J independent jobs (default 6) of one mgpu_bench command,
# each its own processes, set-up and GEMM tuning, then a table of each job's verdict lines (speedup, 95% interval,
# sentence, wall time), whether every pair of intervals of the same configuration pair overlaps, and the spread of the
# speedups ((max - min) / mean). Pass: every pair overlaps and every job's verdict is the same (the sentence without
# the note on what more trials would do, an extrapolation from each job's own interval); exits 1 otherwise.
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir RANKS=2 bash tests/gpu/reproducibility_check.sh [MGPU_BENCH_ARGS...]
#   (default arguments: the default command, --model large --batch 32)
# Knobs: JOBS (default 6), RANKS (default 2), MPIRUN_ARGS (common.sh; e.g. --oversubscribe for a CPU rehearsal).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${BIN_DIR:-$root/build}"
out="${OUT:-/tmp/mgpu_reproducibility}"
jobs="${JOBS:-6}"
ranks="${RANKS:-2}"
mkdir -p "$out"
log="$out/reproducibility.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
args=("$@")
((${#args[@]})) || args=(--model large --batch 32)

status=0
for ((job = 1; job <= jobs; ++job)); do
  started=$SECONDS
  "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" "${args[@]}" --output "$out/job$job.h5" --force \
    >"$out/job$job.txt" 2>&1 || { note "job $job failed (see $out/job$job.txt)"; status=1; }
  echo $((SECONDS - started)) >"$out/job$job.seconds"
done

# Each job's verdict: a line "#   MODEL, global batch B, N GPUs: speedup S [L, H], ..." and the sentence under it.
python3 - "$out" "$jobs" <<'EOF_PY' | tee "$out/table.md"
import re, sys
out, jobs = sys.argv[1], int(sys.argv[2])
verdict = re.compile(r"^#   (.+?GPUs)(?:, ([0-9]+) trials)?: speedup ([0-9.]+) (?:\[(-?[0-9.]+), ([0-9.]+)\]|\(no interval\))")
found = {}  # pair -> [(job, speedup, low, high, sentence, trials)]; jobs of --trials auto may stop at other counts
for job in range(1, jobs + 1):
    try:
        lines = open(f"{out}/job{job}.txt").read().splitlines()
    except OSError:
        continue
    for i, line in enumerate(lines):
        m = verdict.match(line)
        if not m:
            continue
        sentence = lines[i + 1].split(": ", 1)[-1] if i + 1 < len(lines) else ""
        low = float(m.group(4)) if m.group(4) else float("nan")
        high = float(m.group(5)) if m.group(5) else float("nan")
        found.setdefault(m.group(1), []).append((job, float(m.group(3)), low, high, sentence, m.group(2) or "1"))
failed = not found
def seconds(job):  # the job's wall time, mpirun to exit
    try:
        return open(f"{out}/job{job}.seconds").read().strip()
    except OSError:
        return "?"
print("| configuration pair | job | trials | speedup | 95% interval | sentence | job's seconds |")
print("|---|---|---|---|---|---|---|")
for pair, rows in found.items():
    for job, s, low, high, sentence, trials in rows:
        print(f"| {pair} | {job} | {trials} | {s:.3f} | [{low:.3f}, {high:.3f}] | {sentence} | {seconds(job)} |")
print()
print("| configuration pair | jobs | spread of the speedups | pairs of intervals that overlap | same verdict | same note |")
print("|---|---|---|---|---|---|")
for pair, rows in found.items():
    speedups = [r[1] for r in rows]
    spread = (max(speedups) - min(speedups)) / (sum(speedups) / len(speedups))
    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1:]]
    overlapping = sum(1 for a, b in pairs if a[2] <= b[3] and b[2] <= a[3])
    # The verdict, and the note after it ("; about 11 trials in all would tell ..."), which extrapolates each job's
    # own interval and so may differ where the speedup lies near the minimum effect.
    verdicts_and_notes = [r[4].partition("; ")[::2] for r in rows]
    same = len({verdict for verdict, _ in verdicts_and_notes}) == 1
    same_note = len({note for _, note in verdicts_and_notes}) == 1
    failed |= overlapping != len(pairs) or not same or len(rows) != jobs
    print(f"| {pair} | {len(rows)} of {jobs} | {100 * spread:.2f}% | {overlapping} of {len(pairs)} | "
          f"{'yes' if same else 'NO'} | {'yes' if same_note else 'no'} |")
sys.exit(1 if failed else 0)
EOF_PY
python_status=${PIPESTATUS[0]}
((python_status == 0)) || status=1
note "reproducibility: $jobs jobs of mgpu_bench ${args[*]} on $ranks ranks: $( ((status == 0)) && echo pass || echo FAIL)"
exit "$status"
