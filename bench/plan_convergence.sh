#!/usr/bin/env bash
# Purpose: whether independent processes on one machine tune to the same GEMM plan and measure the same step: P
# processes (default 8) of each model and batch on 1 GPU, each its own set-up and tuning; per configuration, how many
# ran the most common plan (the file's gemm_choices without the timings), how many distinct plans there were, and the
# spread of the processes' mean steps ((max - min) / mean). Pass: the most common plan in at least P - 1 processes and
# a spread of at most 1%; exits 1 otherwise.
# Usage: BIN_DIR=dir-with-mgpu_bench OUT=dir bash bench/plan_convergence.sh
# Knobs: PROCESSES (default 8), MODELS (default "medium large"), BATCHES (default "8 32 128 1024 4096"), GPUS (device
# numbers, default "0": with several, one lane per GPU takes the next process, so the spread includes any difference
# between the GPUs), MGPU_ARGS (more mgpu_bench options).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$(cd "${BIN_DIR:-$here/../build}" && pwd)"
out="${OUT:-/tmp/mgpu_plan_convergence}"
processes="${PROCESSES:-8}"
read -r -a models <<<"${MODELS:-medium large}"
read -r -a batches <<<"${BATCHES:-8 32 128 1024 4096}"
read -r -a gpus <<<"${GPUS:-0}"
read -r -a extra <<<"${MGPU_ARGS:-}"
mkdir -p "$out"
log="$out/plan_convergence.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$here/common.sh"

# The work, one line per process: model batch process.
queue=()
for model in "${models[@]}"; do
  for batch in "${batches[@]}"; do
    for ((p = 1; p <= processes; ++p)); do queue+=("$model $batch $p"); done
  done
done

# lane I: runs every process whose place in the queue is I modulo the lane count, on GPU gpus[I].
lane() {
  local i=$1 j model batch p name
  for ((j = i; j < ${#queue[@]}; j += ${#gpus[@]})); do
    read -r model batch p <<<"${queue[j]}"
    name="${model}_b${batch}_p${p}"
    CUDA_VISIBLE_DEVICES="${gpus[i]}" timeout --kill-after=10 600 "${mpirun[@]}" -np 1 "$bin/mgpu_bench" \
      --model "$model" --batch "$batch" "${extra[@]}" --output "$out/$name.h5" --force </dev/null \
      >"$out/$name.txt" 2>&1 || note "$name failed on GPU ${gpus[i]} (see $out/$name.txt)"
    echo "${gpus[i]}" >"$out/$name.gpu"
  done
}
for ((i = 0; i < ${#gpus[@]}; ++i)); do lane "$i" & done
wait

python3 - "$out" "$processes" "${models[*]}" "${batches[*]}" <<'EOF_PY' | tee "$out/table.md"
import collections, re, sys
import h5py
out, processes, models, batches = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
choice = re.compile(r"^(gemm .+?): (.+?) \([0-9.]+ us alone")

def plan_of(path):  # the GEMM plan rank 0 ran: shape -> what ran it, without the timings
    with h5py.File(path, "r") as f:
        for group in f["configurations"].values():  # one configuration: one process count
            text = group.attrs["gemm_choices"]
            text = text.decode() if isinstance(text, bytes) else str(text)
            return tuple(m.group(1) + ": " + m.group(2) for m in map(choice.match, text.splitlines()) if m)
    return None

def mean_step(path):  # the console's "# mean step X ms"
    for line in open(path):
        m = re.match(r"^# mean step ([0-9.]+) ms", line)
        if m:
            return float(m.group(1))
    return None

failed = False
print("| model | batch | processes | same plan | distinct plans | shapes that differ | mean step min (ms) | max (ms) | "
      "spread | GPUs | each plan's mean steps (ms), most common first | result |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for model in models:
    for batch in batches:
        plans, steps, gpus = [], [], set()
        for p in range(1, processes + 1):
            stem = f"{out}/{model}_b{batch}_p{p}"
            try:
                plans.append(plan_of(stem + ".h5"))
                steps.append(mean_step(stem + ".txt"))
                gpus.add(open(stem + ".gpu").read().strip())
            except OSError:
                pass
        steps = [s for s in steps if s is not None]
        if len(steps) != processes or None in plans:
            failed = True
            print(f"| {model} | {batch} | {len(steps)} of {processes} | | | | | | | | | FAIL (missing) |")
            continue
        ranked = [plan for plan, _ in collections.Counter(plans).most_common()]
        common = plans.count(ranked[0])
        by_plan = "; ".join(chr(ord("A") + i) + ": " + " ".join(f"{s:.4f}" for s, q in zip(steps, plans) if q == plan)
                            for i, plan in enumerate(ranked))
        differing = sum(1 for choices in zip(*plans) if len(set(choices)) > 1) if len(set(map(len, plans))) == 1 else "?"
        spread = (max(steps) - min(steps)) / (sum(steps) / len(steps))
        ok = common >= processes - 1 and spread <= 0.01
        failed |= not ok
        print(f"| {model} | {batch} | {processes} | {common} | {len(set(plans))} | {differing} | {min(steps):.4f} | "
              f"{max(steps):.4f} | {100 * spread:.2f}% | {','.join(sorted(gpus))} | {by_plan} | {'ok' if ok else 'FAIL'} |")
sys.exit(1 if failed else 0)
EOF_PY
status=${PIPESTATUS[0]}
note "plan convergence: $processes processes per configuration on GPUs ${gpus[*]}: $( ((status == 0)) && echo pass || echo FAIL)"
exit "$status"
