#!/usr/bin/env bash
# Purpose: the one command behind docs/performance.md, for a 2-GPU machine, in one run (< 9 minutes on 2 x H200):
# the hardware probe and the standalone all-reduce sweep (the floors and the yardstick), mgpu_bench for every figure
# of the issue's targets table, the PyTorch peer for the same configurations, every file checked with h5py, and the
# markdown table (floor, ours, peer, target met or missed) from bench/performance_table.py, printed last.
# Usage (from the repository root, binaries in BIN_DIR, results to OUT):
#   BIN_DIR=build OUT=/tmp/perf bash bench/performance.sh
# Knobs: RUNS (mgpu_bench runs per configuration, default 30), PEER_RUNS (default 10), MAX_BYTES (largest all-reduce,
# default 1G), QUICK=1 (5 and 3 runs: a smoke test of the script), STEP_FLAGS=off (drop the step options --graph,
# --overlap, --timing, --bucket-mb, --grad-dtype, --accumulate for a build without them: the figures then measure the
# core step).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BIN_DIR:-$root/build}"
out="${OUT:-/tmp/mgpu_performance}"
runs="${RUNS:-30}"
peer_runs="${PEER_RUNS:-10}"
max_bytes="${MAX_BYTES:-1G}"
if [[ "${QUICK:-0}" == 1 ]]; then runs=5; peer_runs=3; fi
results="$out/results"
mkdir -p "$results"
log="$out/performance.log"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain, the mpirun array and note().
source "$root/bench/common.sh"
# NVLink multicast off (common.sh: where NVLink SHARP is unavailable), for PyTorch and NVSHMEM too.
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python=$(command -v python3)
status=0
started=$SECONDS
check() {  # check NAME COMMAND...: runs it with its output in the log, remembers a failure
  note "## $1 ($((SECONDS - started)) s)"; shift
  "$@" >>"$log" 2>&1 || { note "FAILED ($?): $*"; status=1; }
}
# ours NAME RANKS ARGS...: mgpu_bench on RANKS GPUs into results/ours_NAME.h5 (STEP_FLAGS=off drops the step
# helper's flags, for a build that predates them).
ours() {
  local name=$1 ranks=$2; shift 2
  local args=()
  while (($#)); do
    case "$1" in
      --graph|--overlap|--overlap-order|--timing|--bucket-mb|--grad-dtype|--accumulate|--fuse-optimizer|--gemm-tuning)
        if [[ "${STEP_FLAGS:-on}" == off ]]; then shift 2; continue; fi ;;
    esac
    args+=("$1"); shift
  done
  check "mgpu_bench $name" "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" "${args[@]}" --runs "$runs" --trials 1 \
    --output "$results/ours_$name.h5" --force
}

{ date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'
} >>"$log" 2>&1

# 1. Floors: copy bandwidth, GEMM rates at the step's exact shapes (per-GPU batches of every figure), launch costs.
check "probe" "$bin/mgpu_bench" probe --batches 16,32,64,512,1024,2048,4096 --runs 5 \
  --output "$results/tools.h5" --force
# 2. The yardstick: the standalone all-reduce, 8 B .. 1 GiB and both gradients' exact sizes, data checked.
check "allreduce sweep" "${mpirun[@]}" -np 2 "$bin/mgpu_bench" allreduce --min-bytes 8 --max-bytes "$max_bytes" \
  --runs 5 --output "$results/tools.h5" --force
# 2b. Our skinny GEMM against cuBLAS at the step's narrow shapes (docs/performance.md, "What the step does now"), if built.
if [[ -x "$bin/skinny_gemm_bench" ]]; then
  note "## skinny GEMM vs cuBLAS ($((SECONDS - started)) s)"
  "$bin/skinny_gemm_bench" >"$results/skinny_gemm_bench.txt" 2>>"$log" || { note "FAILED: skinny_gemm_bench"; status=1; }
fi

# 3. Ours, one configuration per figure (fp32; names are what performance_table.py looks for; for a step time or a
# speedup the table takes the fastest fp32 variant of the same model, batch and GPU count and names it). The default
# step (--overlap auto = off) for batch 32/64: overlap measured slower there (large b32 on 2 GPUs 0.399 ms with it,
# 0.335 ms without). Overlap on for the 2-GPU batch 1024/4096 rows (the exposed-communication figures: both
# --overlap-order, the deferred one with 8 and 20 MB buckets), each with a no-overlap twin for the speedup. On 1 GPU at these batches the default (--fuse-optimizer auto) forms the weight
# gradients inside Adam; the _unfused twins show what that gains.
step=(--graph on --timing events)
ours large_b32_n1 1 --model large --batch 32 "${step[@]}"
ours large_b32_n1_untimed 1 --model large --batch 32 --graph on --timing none
# The step figures once more with only each step's start and end marked (--timing step): each phase mark costs the
# step about 3 us, so these are the step times least disturbed by the measurement.
ours large_b32_n1_step 1 --model large --batch 32 --graph on --timing step
ours medium_b64_n1_step 1 --model medium --batch 64 --graph on --timing step
ours large_b32_n2_step 2 --model large --batch 32 --graph on --timing step
# The default --gemm-tuning step (each GEMM shape's near-fastest options tried in the replayed step) against the
# choices made alone, for the step figures and the speedup's batch 4096.
ours large_b32_n1_step_alone 1 --model large --batch 32 --graph on --timing step --gemm-tuning alone
ours medium_b64_n1_step_alone 1 --model medium --batch 64 --graph on --timing step --gemm-tuning alone
ours large_b32_n2_step_alone 2 --model large --batch 32 --graph on --timing step --gemm-tuning alone
ours large_b32_n1_unfused 1 --model large --batch 32 "${step[@]}" --fuse-optimizer off
ours medium_b64_n1 1 --model medium --batch 64 "${step[@]}"
ours medium_b64_n1_unfused 1 --model medium --batch 64 "${step[@]}" --fuse-optimizer off
ours large_b32_n2 2 --model large --batch 32 "${step[@]}"
# bf16 rows (lines of their own, not the fp32 target figures): bf16 GEMM operands on 1 GPU, and with a bf16
# all-reduce on 2.
ours large_b32_n1_bf16 1 --model large --batch 32 "${step[@]}" --precision bf16
ours large_b32_n2_bf16 2 --model large --batch 32 "${step[@]}" --precision bf16 --grad-dtype bf16
for batch in 1024 4096; do
  ours "large_b${batch}_n1" 1 --model large --batch "$batch" "${step[@]}"
  ours "large_b${batch}_n2" 2 --model large --batch "$batch" "${step[@]}" --overlap on
  # The deferred order (the default) with the input layer's gradient in one piece, and PyTorch DDP's layerwise order.
  ours "large_b${batch}_n2_bucket20" 2 --model large --batch "$batch" "${step[@]}" --overlap on --bucket-mb 20
  ours "large_b${batch}_n2_layerwise" 2 --model large --batch "$batch" "${step[@]}" --overlap on --overlap-order layerwise
  ours "large_b${batch}_n2_no_overlap" 2 --model large --batch "$batch" "${step[@]}" --overlap off
done
ours large_b4096_n1_alone 1 --model large --batch 4096 "${step[@]}" --gemm-tuning alone
ours large_b4096_n2_bucket20_alone 2 --model large --batch 4096 "${step[@]}" --overlap on --bucket-mb 20 \
  --gemm-tuning alone

# 4. The PyTorch peer on the same machine, same configurations (batches <= 1024 for the "ours faster" target).
peer=("$root/bench/peers/torch_mlp.py" --runs "$peer_runs" --force)
check "peer graph (1 GPU)" "$python" "${peer[@]}" --mode graph --config large:32 --config medium:64 \
  --config large:1024 --output "$results/peer_graph.h5"
check "peer DDP (2 GPUs)" "$python" -m torch.distributed.run --standalone --nproc_per_node 2 "${peer[@]}" --mode ddp \
  --config large:32 --config large:1024 --output "$results/peer_ddp.h5"

# 5. Every file read back with h5py alone; then the table.
for file in "$results"/*.h5; do
  check "h5py check $(basename "$file")" "$python" "$root/tests/end_to_end/check_results_h5py.py" "$file"
done
note "## done in $((SECONDS - started)) s"
"$python" "$root/bench/performance_table.py" --analyze "$bin/mgpu_analyze" "$results" >"$out/performance_table.md" 2>>"$log" || status=1
# One archive instead of a dozen files: easier to copy back from the GPU machine.
tar -C "$out" -czf "$out/performance_results.tar.gz" results && rm -rf "$results"
echo; grep -h -e "^## " -e "FAILED" "$log" | tail -n 40
echo; cat "$out/performance_table.md"
echo "=== status $status"
exit $status
