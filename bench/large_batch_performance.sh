#!/usr/bin/env bash
# Purpose: docs/performance.md's "Large batches" section in one call on any number of GPUs of one host (< 7 minutes
# on one H200): our step (--timing step) against the strongest PyTorch steps (graph-captured, and a graph-captured
# data-parallel step, on the same GPUs; eager DDP beside them) for medium and large at each batch, the sum of our GEMMs
# alone, TFLOP/s, and Nsight Compute's per-kernel table of our kernels for large and medium at batch 32 and 4096;
# the Markdown tables from bench/large_batch_table.py printed last.
# Usage (from the repository root, binaries in BIN_DIR, results to OUT):
#   BIN_DIR=build OUT=/tmp/large bash bench/large_batch_performance.sh
# Knobs: GPUS (ranks, default 1), RUNS (mgpu_bench runs per configuration, default 10), PEER_RUNS (default 5),
# BATCHES (default 8,32,128,1024,4096), BASE_BIN (a directory with an earlier build's mgpu_bench: the same sweep again
# for an A/B in the same call; BASE_BATCHES, default BATCHES, its batches; AB_ROUNDS, default 0, more alternating
# rounds of both builds over AB_BATCHES, default 32,64: the small-batch figures), NCU=0 (no kernel table), TESTS=0
# (skip the GPU tests found in BIN_DIR), DDP=0 (no eager DDP row), BUDGET_S (default 400: a step not started by then
# is skipped, saying so, so that the tables still come back).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BIN_DIR:-$root/build}"
out="${OUT:-/tmp/mgpu_large_batch}"
gpus="${GPUS:-1}"
runs="${RUNS:-10}"
peer_runs="${PEER_RUNS:-5}"
batches="${BATCHES:-8,32,128,1024,4096}"
results="$out/results"
mkdir -p "$results"
log="$out/large_batch.log"
source "$root/bench/common.sh"  # NCCL_NVLS_ENABLE=0, the mpirun array, note()
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python=$(command -v python3)
status=0
started=$SECONDS
budget="${BUDGET_S:-400}"
check() {  # check NAME COMMAND...: runs it with its output in the log, remembers a failure
  if ((SECONDS - started > budget)); then note "SKIPPED (past ${budget} s): $1"; return; fi
  note "## $1 ($((SECONDS - started)) s)"; shift
  "$@" >>"$log" 2>&1 || { note "FAILED ($?): $*"; status=1; }
}
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv
} >>"$log" 2>&1

# 1. The GPU tests this check depends on, where they were built (they skip without a GPU).
if [[ "${TESTS:-1}" == 1 ]]; then
  for test in test_relu_dropout_backward_bias test_generate_batch test_skinny_gemm test_cuda_mlp; do
    [[ -x "$bin/$test" ]] && check "$test" "$bin/$test" --gtest_brief=1
  done
fi

# 2. The copy bandwidth and a graph node's cost (the kernel table's yardsticks).
check "probe" "$bin/mgpu_bench" probe --model large --batches 4096 --runs 3 --output "$results/probe.h5" --force

# 3. Ours: every batch of both presets in one sweep, each step marked only at its start and end.
# medium 64: a small-batch figure of docs/performance.md, kept beside the others.
sweep=(--sweep "medium:$batches,64" --sweep "large:$batches" --graph on --timing step --runs "$runs" --trials 1)
check "mgpu_bench" "${mpirun[@]}" -np "$gpus" "$bin/mgpu_bench" "${sweep[@]}" --output "$results/ours.h5" --force
# 3a. On several GPUs, the same model and global batch on one GPU too, for the speedup at batch 4096.
if ((gpus > 1)); then
  check "mgpu_bench, 1 GPU" "$bin/mgpu_bench" --sweep medium:4096 --sweep large:4096 --graph on --timing step \
    --runs "$runs" --output "$results/ours_1gpu.h5" --force
fi
# 3b. The earlier build, where given: the same sweep, for the change per cell.
if [[ -n "${BASE_BIN:-}" ]]; then
  base_batches="${BASE_BATCHES:-$batches}"
  check "mgpu_bench (earlier build)" "${mpirun[@]}" -np "$gpus" "$BASE_BIN/mgpu_bench" --sweep "medium:$base_batches" \
    --sweep "large:$base_batches" --graph on --timing step --runs "$runs" --output "$results/ours_base.h5" --force
fi

# 3c. Alternating rounds of both builds at the small batches, so that a drift of the machine shows as such.
if [[ -n "${BASE_BIN:-}" ]]; then
  for round in $(seq 1 "${AB_ROUNDS:-0}"); do
    for build in new base; do
      build_bin=$bin; [[ $build == base ]] && build_bin=$BASE_BIN
      check "A/B round $round, $build" "$build_bin/mgpu_bench" --sweep "medium:${AB_BATCHES:-32,64}" \
        --sweep "large:${AB_BATCHES:-32,64}" --graph on --timing step --runs "$runs" \
        --output "$results/ab_${build}_$round.h5" --force
    done
  done
fi

# 4. The PyTorch peers on the same GPUs: the graph-captured step (one GPU), the graph-captured data-parallel step
# (torchrun, every GPU of the call, one rank too), eager DDP.
configs=()
for model in medium large; do
  for batch in ${batches//,/ }; do configs+=(--config "$model:$batch"); done
done
peer=("$root/bench/peers/torch_mlp.py" --runs "$peer_runs" --force "${configs[@]}")
torchrun=("$python" -m torch.distributed.run --standalone --nproc_per_node "$gpus")
if [[ "$gpus" == 1 ]]; then
  check "peer graph" "$python" "${peer[@]}" --mode graph --output "$results/peer_graph.h5"
fi
check "peer graph-dp" "${torchrun[@]}" "${peer[@]}" --mode graph-dp --output "$results/peer_graph_dp.h5"
[[ "${DDP:-1}" == 1 ]] && check "peer ddp" "${torchrun[@]}" "${peer[@]}" --mode ddp --output "$results/peer_ddp.h5"

# 5. Our kernels one by one under Nsight Compute (one rank, no graph, 3 steps; GEMMs left out).
if [[ "${NCU:-1}" == 1 ]] && command -v ncu >/dev/null; then
  # advance_step: one thread, the launch floor's yardstick.
  kernels='regex:relu|dropout|adam|mse|generate|output_head|advance_step'
  for figure in large:32 large:4096 medium:32 medium:4096; do
    model=${figure%:*} batch=${figure#*:}
    if ((SECONDS - started > budget)); then note "SKIPPED (past ${budget} s): ncu $figure"; continue; fi
    note "## ncu $model b$batch ($((SECONDS - started)) s)"
    ncu --clock-control none --kernel-name-base function --kernel-name "$kernels" --launch-count 60 --csv \
      --page raw --print-units base \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_write.sum \
      "$bin/mgpu_bench" --model "$model" --batch "$batch" --graph off --gemm-tuning alone --runs 1 --warmup 1 \
      --steps 2 --output "$results/ncu_run.h5" --force >"$results/ncu_${model}_b${batch}.csv" 2>>"$log" ||
      { note "FAILED: ncu $model $batch"; status=1; }
  done
  rm -f "$results/ncu_run.h5"
fi

note "## done in $((SECONDS - started)) s"
"$python" "$root/bench/large_batch_table.py" --analyze "$bin/mgpu_analyze" "$results" >"$out/large_batch_table.md" 2>>"$log" || status=1
tar -C "$out" -czf "$out/large_batch_results.tar.gz" results && rm -rf "$results"
echo; grep -h -e "^## " -e "FAILED" -e "PASSED\|FAILED TEST\|tests ran" "$log" | tail -n 40
echo; cat "$out/large_batch_table.md"
echo "=== status $status"
exit $status
