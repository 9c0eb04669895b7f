#!/usr/bin/env bash
# Purpose: how close each speedup comes to its ceiling (docs/statistics.md, "The ceiling": the speedup if communication
# cost nothing) for ours and for the graph-captured data-parallel PyTorch peer, in one call: per pass, for each model,
# one mgpu_bench sweep over the grid's global batches and every local batch they split into, on 1 GPU and on every
# GPU count of the machine (so each N-GPU cell has its 1-GPU baseline and its 1-GPU configuration at the local
# batch), then the peer (torchrun, one process per GPU count, the same batches): whole processes alternated, ours
# then the peer, pass after pass. bench/ceiling_table.py prints one row per model, global batch and GPU count: ours
# and the peer's speedup, ceiling and fraction of the ceiling reached, and our exposed all-reduce.
# Usage: BIN_DIR=build OUT=/tmp/ceiling bash bench/ceiling_grid.sh
# Knobs: GRID ("large:1024,2048,4096 medium:2048,4096"), GPUS (default: the GPUs nvidia-smi lists; counts 2 and 4 up
# to it), PASSES (2), RUNS (10), PEER (1: run the peer where python3 has torch; 0: ours only), EXTRA (more mgpu_bench
# options, e.g. "--overlap off"), DEVICE=cpu (a dry run on the CPU fallback: no peer).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-/tmp/mgpu_ceiling}"
grid="${GRID:-large:1024,2048,4096 medium:2048,4096}"
passes="${PASSES:-2}"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note(); then bin, runs, device, extra, python, the
# log and the GPU count.
source "$root/bench/common.sh"
start_pass_study ceiling_grid
counts=(1)
for n in 2 4 8; do ((n <= gpus)) && counts+=("$n"); done
peer="${PEER:-1}"
[[ "$device" == cpu ]] && peer=0
if [[ "$peer" == 1 ]] && ! "$python" -c "import torch" 2>/dev/null; then
  note "no torch in $python: the peer is left out"
  peer=0
fi

# The global batches and every local batch they split into on the grid's GPU counts (the 1-GPU configurations the
# ceilings need), ascending, as a comma list.
batches_of() {
  local globals=$1 b n
  for b in ${globals//,/ }; do
    for n in "${counts[@]}"; do ((b % n == 0)) && echo $((b / n)); done
  done | sort -n -u | paste -sd, -
}

for ((pass = 1; pass <= passes; ++pass)); do
  for entry in $grid; do
    model=${entry%%:*} batches=$(batches_of "${entry##*:}")
    note "pass $pass: $model at $batches on $(IFS=,; echo "${counts[*]}") GPUs"
    "${mpirun[@]}" -np "$gpus" "$bin/mgpu_bench" --model "$model" --batch "$batches" \
      --gpus "$(IFS=,; echo "${counts[*]}")" --trials 1 --runs "$runs" --device "$device" "${extra[@]}" \
      --output "$out/ours_${model}_p${pass}.h5" --force >>"$log" 2>&1 || note "FAILED: ours, $model, pass $pass"
    [[ "$peer" == 1 ]] || continue
    configs=()
    for b in ${batches//,/ }; do configs+=(--config "$model:$b"); done
    for n in "${counts[@]}"; do
      "$python" -m torch.distributed.run --standalone --nproc_per_node "$n" "$root/bench/peers/torch_mlp.py" \
        --mode graph-dp --runs "$runs" --force "${configs[@]}" --output "$out/peer_${model}_n${n}_p${pass}.h5" \
        >>"$log" 2>&1 || note "FAILED: peer, $model on $n GPUs, pass $pass"
    done
  done
done

"$python" "$root/bench/ceiling_table.py" --analyze "$bin/mgpu_analyze" --grid "$grid" "$out" | tee "$out/table.md"
