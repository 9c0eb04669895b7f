#!/usr/bin/env bash
# Purpose: each overlap lever alone, measured against the communication-free ceiling (docs/statistics.md, "The
# ceiling"): for one model and global batch on N GPUs, per pass, the 1-GPU configurations at the global and the local
# batch (one process), then one N-GPU process per lever, whole processes alternated pass after pass; bench/
# lever_table.py prints per lever the speedup, its ceiling and the fraction reached (intervals over the passes) and the
# N-GPU step's phases (backward, exposed all-reduce, optimizer).
# Usage: BIN_DIR=build OUT=/tmp/levers bash bench/overlap_levers.sh
# Knobs: MODEL (large), BATCH (4096), GPUS (default: the GPUs nvidia-smi lists), PASSES (3), RUNS (10), LEVERS (a
# list of NAME|ARGS, ARGS being mgpu_bench options and NAME=value words for the environment, e.g.
# "default| after-last|--overlap on --overlap-update after-last ctas4|NCCL_MAX_CTAS=4"; default: the list below),
# EXTRA (mgpu_bench options of every process, e.g. "--steps 50"), DEVICE=cpu (a dry run on the CPU fallback:
# environment levers only).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-/tmp/mgpu_levers}"
model="${MODEL:-large}"
batch="${BATCH:-4096}"
passes="${PASSES:-3}"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note(); then bin, runs, device, extra, python, the
# log and the GPU count.
source "$root/bench/common.sh"
start_pass_study overlap_levers
((batch % gpus == 0)) || { echo "overlap_levers: BATCH=$batch does not split over $gpus GPUs" >&2; exit 2; }
# Each lever alone, against the default: overlap forced off and on, where Adam runs, the bucket cap, the order, NCCL's
# CTA count and policy (fewer of NCCL's CTAs leave more SMs to backward's GEMMs beside them), backward's GEMMs chosen
# for the SMs NCCL leaves (124 and 116 of an H200's 132: 8 and 16 held), and the promising pairs.
default_levers=(
  "default|"
  "overlap-off|--overlap off"
  "overlap-on|--overlap on"
  "after-last|--overlap on --overlap-update after-last"
  "bucket-2|--overlap on --bucket-mb 2"
  "bucket-32|--overlap on --bucket-mb 32"
  "layerwise|--overlap on --overlap-order layerwise"
  "cta-efficiency|--overlap on NCCL_CTA_POLICY=1"
  "max-ctas-4|--overlap on --nccl-max-ctas 4"
  "max-ctas-8|--overlap on --nccl-max-ctas 8"
  "sm-target-124|--overlap on --overlap-sm-target 124"
  "sm-target-116|--overlap on --overlap-sm-target 116"
  "ctas-8-target-124|--overlap on --nccl-max-ctas 8 --overlap-sm-target 124"
  "after-last-ctas-8|--overlap on --overlap-update after-last --nccl-max-ctas 8"
)
levers=("${default_levers[@]}")
[[ -n "${LEVERS:-}" ]] && read -r -a levers <<<"$LEVERS"

for ((pass = 1; pass <= passes; ++pass)); do
  note "pass $pass: $model at $batch and $((batch / gpus)) on 1 GPU"
  "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model "$model" --batch "$batch,$((batch / gpus))" --gpus 1 --trials 1 \
    --runs "$runs" --device "$device" "${extra[@]}" --output "$out/base_p${pass}.h5" --force >>"$log" 2>&1 ||
    note "FAILED: 1 GPU, pass $pass"
  for lever in "${levers[@]}"; do
    name=${lever%%|*} options=() environment=()
    for word in ${lever#*|}; do
      if [[ "$word" == NCCL_*=* ]]; then environment+=(-x "$word"); else options+=("$word"); fi
    done
    "${mpirun[@]}" "${environment[@]}" -np "$gpus" "$bin/mgpu_bench" --model "$model" --batch "$batch" --gpus "$gpus" \
      --trials 1 --runs "$runs" --device "$device" "${extra[@]}" "${options[@]}" --output "$out/lever_${name}_p${pass}.h5" \
      --force >>"$log" 2>&1 || note "FAILED: $name, pass $pass"
  done
done

"$python" "$root/bench/lever_table.py" --analyze "$bin/mgpu_analyze" --gpus "$gpus" "$out" | tee "$out/table.md"
