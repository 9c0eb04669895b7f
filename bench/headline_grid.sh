#!/usr/bin/env bash
# Purpose: README's headline grid measured as the default command measures it: for each model, one job of
# `mpirun -np N mgpu_bench --model MODEL --batch 8,32,...,4096` with every other setting at its default (1 GPU beside
# N, --trials auto, default timing, the outlier screen), its results file kept for the archive, then
# `mgpu_analyze report --format json` of it (what bench/generate_docs.py reads) and the verdict's text.
# One job per model, so that a machine lease of a few calls can take the models in separate calls (MODELS=medium,
# then MODELS=large) into the same OUT.
# Usage: BIN_DIR=build OUT=/tmp/grid bash bench/headline_grid.sh
# Knobs: MODELS ("medium large"), BATCHES (8,32,128,512,1024,2048,4096), RANKS (default: the GPUs nvidia-smi lists),
# EXTRA (more mgpu_bench options; the archived grid uses none), DEVICE=cpu (a dry run on the CPU fallback, 2 ranks).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_grid}"
models="${MODELS:-medium large}"
batches="${BATCHES:-8,32,128,512,1024,2048,4096}"
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

# The machine, once per OUT: what the results files do not say about the host as a whole.
if [[ ! -s "$out/machine.txt" && "$device" != cpu ]]; then
  { nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv; } \
    >"$out/machine.txt" 2>&1
fi

status=0
for model in $models; do
  file="$out/grid_${model}_n${ranks}.h5"
  note "$model at global batch $batches on 1 and $ranks GPUs: $file"
  start=$SECONDS
  if "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$model" --batch "$batches" "${extra[@]}" \
    --output "$file" --force >"$out/grid_${model}_n${ranks}.txt" 2>>"$log"; then
    note "  done in $((SECONDS - start)) s"
  else
    note "  FAILED after $((SECONDS - start)) s: $(tail -n 3 "$out/grid_${model}_n${ranks}.txt" "$log" | tr '\n' ' ')"
    status=1
    continue
  fi
  "$bin/mgpu_analyze" report "$file" --format json >"${file%.h5}.json" ||
    { note "  FAILED: mgpu_analyze report $file"; status=1; }
done
# The verdicts last (each job's closing lines): the summary a reader of the call sees first.
for model in $models; do
  text="$out/grid_${model}_n${ranks}.txt"
  [[ -s "$text" ]] && grep -E '^#   (medium|large|break-even)' "$text"
done
exit "$status"
