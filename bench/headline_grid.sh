#!/usr/bin/env bash
# Purpose: README's headline grid measured as the default command measures it: one job of
# `mpirun -np N mgpu_bench --model medium,large --batch 8,32,128,512,1024,2048,4096` with every other setting at its
# default (1 GPU beside N, --trials auto, default timing, the outlier screen), its results file grid.h5 kept for the
# archive (bench/results/grid-MACHINE/grid.h5, what bench/generate_docs.py reads), then
# `mgpu_analyze report --format json` of it and the verdict's lines.
# A job that does not fit one sitting: LIMIT_S ends it with SIGTERM, which keeps every completed configuration in the
# file; the same command with RESUME=1 and that file in OUT completes it (--resume).
# Usage: BIN_DIR=build OUT=/tmp/grid bash bench/headline_grid.sh
# Knobs: MODELS (medium,large), BATCHES (8,32,128,512,1024,2048,4096), RANKS (default: the GPUs nvidia-smi lists),
# LIMIT_S (0: none), RESUME (0), EXTRA (more mgpu_bench options; the archived grid uses none), DEVICE=cpu (a dry run
# on the CPU fallback, 2 ranks).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_grid}"
models="${MODELS:-medium,large}"
batches="${BATCHES:-8,32,128,512,1024,2048,4096}"
limit_s="${LIMIT_S:-0}"
device="${DEVICE:-auto}"
read -r -a extra <<<"${EXTRA:-}"
mkdir -p "$out"
log="$out/headline_grid.log"
: >>"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
if [[ "$device" == cpu ]]; then
  ranks="${RANKS:-2}"
  extra+=(--device cpu)
else
  ranks="${RANKS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}"
fi
((ranks >= 2)) || { echo "headline_grid: needs 2 GPUs or more (RANKS=$ranks)" >&2; exit 2; }
if [[ "${RESUME:-0}" == 1 ]]; then extra+=(--resume); else extra+=(--force); fi

# The machine, once per OUT: what the results file does not say about the host as a whole.
if [[ ! -s "$out/machine.txt" && "$device" != cpu ]]; then
  { nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } \
    >"$out/machine.txt" 2>&1
fi

file="$out/grid.h5"
note "$models at global batch $batches on 1 and $ranks GPUs: $file$( ((limit_s > 0)) && echo " (limit $limit_s s)")"
start=$SECONDS
limit=()
((limit_s > 0)) && limit=(timeout -s TERM -k 30 "$limit_s")
"${limit[@]}" "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$models" --batch "$batches" "${extra[@]}" \
  --output "$file" >>"$out/grid.txt" 2>>"$log"
status=$?
note "  mgpu_bench ended with status $status after $((SECONDS - start)) s"
[[ -s "$file" ]] && { "$bin/mgpu_analyze" report "$file" --format json >"$out/grid.json" || status=1; }
# The verdict last (the job's closing lines): what a reader of the call sees first.
grep -E '^#   (medium|large|break-even)' "$out/grid.txt" | tail -n 40
exit "$status"
