#!/usr/bin/env bash
# Purpose: what bench/floor_ab.sh (this build against an earlier one and the floor) does not show of the fused
# optimizer's batch split and of the skinny GEMM's products wider than one tile, in parts that each fit a short job:
# the GPU tests that hold them to float64 (tests), the chosen split and GEMMs at the cells they serve (report), and the
# fused optimizer on against off at the batches where its default rule decides (fused).
# Usage: BIN_DIR=dir OUT=dir [PART=all|tests|report|fused] [RUNS=5] [PASSES=2] [FUSED_CONFIGS="medium:1024 ..."]
#        bash bench/fused_wide_check.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
out="${OUT:-/tmp/mgpu_fused_wide}"
part="${PART:-all}"
runs="${RUNS:-5}"
passes="${PASSES:-2}"
fused_configs="${FUSED_CONFIGS:-medium:512 medium:1024 medium:2048 medium:4096 large:128 large:256}"
mkdir -p "$out/logs"
log="$out/fused_wide_check.log"
: >"$log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"

test_binary() { [[ -x "$bin/$1" ]] && echo "$bin/$1" || echo "$bin/tests/$1"; }
wanted() { [[ "$part" == all || "$part" == "$1" ]]; }

# mean_step FILE: the mean step (ms) of a results file, as mgpu_bench printed it.
mean_step() { grep -oP '# mean step \K[0-9.]+' "$1" | head -n 1; }

if wanted tests; then
  for name in test_weight_gradient_adam test_skinny_gemm test_cuda_mlp test_tuned_gemm; do
    "$(test_binary "$name")" >"$out/logs/$name.log" 2>&1
    rc=$?
    note "$name rc=$rc: $(grep -E '^\[  PASSED  \]' "$out/logs/$name.log")"
    grep -E '^\[  FAILED  \]' "$out/logs/$name.log" | head -n 20 | tee -a "$log"
  done
fi

if wanted report; then
  # What the tuners chose at the cells this work targets: the fused optimizer's split (stderr) and every GEMM.
  for config in medium:128 medium:1024 medium:4096 large:128; do
    model=${config%%:*} batch=${config##*:}
    name="report_${model}_b${batch}"
    MGPU_GEMM_REPORT=1 "${mpirun[@]}" -np 1 -x MGPU_GEMM_REPORT "$bin/mgpu_bench" --model "$model" --batch "$batch" \
      --runs 2 --trials 1 --timing step --output "$out/logs/$name.h5" --force >"$out/logs/$name.log" 2>&1
    rc=$?
    note "$model b$batch rc=$rc mean step $(mean_step "$out/logs/$name.log") ms"
    # The split and its timings; each GEMM our kernel runs (chosen alone, or by the step-level search: "->").
    grep -E '^fused optimizer|chosen skinny|-> skinny' "$out/logs/$name.log" | tee -a "$log"
  done
fi

if wanted fused; then
  # The default rule's evidence (config/resolver.hpp): this build's step with the fused optimizer on and off.
  note "| configuration | fused on (ms) | fused off (ms) | on / off |"
  note "|---|---|---|---|"
  for config in $fused_configs; do
    model=${config%%:*} batch=${config##*:}
    declare -A step=()
    for pass in $(seq 1 "$passes"); do
      for fused in on off; do
        name="fused_${model}_b${batch}_${fused}_p${pass}"
        "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model "$model" --batch "$batch" --fuse-optimizer "$fused" \
          --runs "$runs" --trials 1 --timing step --output "$out/logs/$name.h5" --force >"$out/logs/$name.log" 2>&1 ||
          note "FAILED: $name"
        step[$fused]="${step[$fused]:-} $(mean_step "$out/logs/$name.log")"
      done
    done
    # The lowest pass of each: drift between passes falls on both.
    on=$(tr ' ' '\n' <<<"${step[on]}" | grep . | sort -g | head -n 1)
    off=$(tr ' ' '\n' <<<"${step[off]}" | grep . | sort -g | head -n 1)
    note "| $model b$batch | $on | $off | $(awk -v a="$on" -v b="$off" 'BEGIN { if (b > 0) printf "%.3f", a / b }') |"
    unset step
  done
fi
