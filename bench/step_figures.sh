#!/usr/bin/env bash
# Purpose: the step-execution figures of docs/measurement.md in one run on a 2-GPU machine: the CUDA tests (graph,
# overlap, precision, timing paths against the float64 reference and 2 GPUs against 1), then mgpu_bench for every
# configuration of the table (graph on/off, --timing none, tf32, overlap and bucket sizes, batch 32/1024/4096 on 1
# and 2 GPUs), and a standalone all-reduce of the gradient's bytes through PyTorch's NCCL as a yardstick.
# Usage: BIN_DIR=dir-with-binaries OUT=dir RUNS=5 bash bench/step_figures.sh   (logs and a summary under $OUT)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BIN_DIR:-$root/build}"
out="${OUT:-/tmp/mgpu_step_figures}"
runs="${RUNS:-5}"
mkdir -p "$out/logs"
summary="$out/summary.txt"
: >"$summary"
# NCCL_NVLS_ENABLE=0, MGPU_PROGRESS=plain and the mpirun array.
source "$root/bench/common.sh"
# NVLink multicast stays off for PyTorch and NVSHMEM too.
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mpirun+=(--bind-to none)
gpus=$(nvidia-smi -L | grep -c '^GPU')

test_cuda_mlp="$bin/test_cuda_mlp"; [[ -x "$test_cuda_mlp" ]] || test_cuda_mlp="$bin/tests/test_cuda_mlp"
test_dp="$bin/test_cuda_data_parallel"; [[ -x "$test_dp" ]] || test_dp="$bin/tests/test_cuda_data_parallel"
"$test_cuda_mlp" >"$out/logs/test_cuda_mlp.log" 2>&1
echo "test_cuda_mlp rc=$?" | tee -a "$summary"
if ((gpus >= 2)); then
  "${mpirun[@]}" -np 2 "$test_dp" >"$out/logs/test_cuda_data_parallel.log" 2>&1
  echo "test_cuda_data_parallel rc=$?" | tee -a "$summary"
fi

# bench NAME RANKS ARGS...: one configuration; one summary line from mgpu_bench's closing lines.
bench() {
  local name=$1 ranks=$2
  shift 2
  ((ranks <= gpus)) || return 0
  local log="$out/logs/$name.log"
  "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" "$@" --warmup 10 --steps 100 --runs "$runs" --trials 1 --force \
    --output "$out/logs/$name.h5" >"$log" 2>&1
  local rc=$?
  value() { grep -oP "$1" "$log" | head -n 1; }
  printf '%-16s ranks=%d rc=%d step=%s wall=%s samples/s=%s fwd=%s bwd=%s allreduce=%s exposed=%s opt=%s overlap%%=%s\n' \
    "$name" "$ranks" "$rc" "$(value '# mean step \K[0-9.]+')" "$(value '# wall per measured step \K[0-9.]+')" \
    "$(value 'samples/s mean \K[0-9.]+')" "$(value 'forward \K[0-9.]+')" "$(value 'backward \K[0-9.]+')" \
    "$(value 'all-reduce \K[0-9.]+(?= ms \(each)')" "$(value 'exposed all-reduce \K[0-9.]+')" \
    "$(value 'optimizer \K[0-9.]+')" "$(value '# overlap \K-?[0-9]+')" | tee -a "$summary"
}
bench L32_graph 1 --model large --batch 32
bench L32_eager 1 --model large --batch 32 --graph off
bench L32_untimed 1 --model large --batch 32 --timing none
bench M64_graph 1 --model medium --batch 64
bench M64_eager 1 --model medium --batch 64 --graph off
bench M64_untimed 1 --model medium --batch 64 --timing none
bench L32_tf32 1 --model large --batch 32 --precision tf32
bench L1024 1 --model large --batch 1024
bench L4096 1 --model large --batch 4096
bench L32_n2 2 --model large --batch 32
bench L32_n2_eager 2 --model large --batch 32 --graph off
bench L32_n2_untimed 2 --model large --batch 32 --timing none
bench L32_n2_ov8 2 --model large --batch 32 --overlap on
bench L32_n2_ov32 2 --model large --batch 32 --overlap on --bucket-mb 32
bench L32_n2_tf32 2 --model large --batch 32 --precision tf32
bench L1024_n2 2 --model large --batch 1024
bench L1024_n2_ov8 2 --model large --batch 1024 --overlap on
bench L4096_n2 2 --model large --batch 4096
bench L4096_n2_ov4 2 --model large --batch 4096 --overlap on --bucket-mb 4
bench L4096_n2_ov16 2 --model large --batch 4096 --overlap on --bucket-mb 16

# Yardstick: the same bytes (the large model's 6,885,376 fp32 gradients) all-reduced alone, 2 processes.
if ((gpus >= 2)) && python3 -c 'import torch' 2>/dev/null; then
  python3 - >"$out/logs/allreduce_ref.log" 2>&1 <<'PY'
import os, torch, torch.distributed as dist, torch.multiprocessing as mp
def work(rank, world):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    x = torch.ones(6885376, device="cuda")
    for _ in range(20): dist.all_reduce(x)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(); a.record()
    for _ in range(100): dist.all_reduce(x)
    b.record(); torch.cuda.synchronize()
    ms = a.elapsed_time(b) / 100
    if rank == 0:
        algbw = x.numel() * 4 / (ms * 1e-3) / 1e9
        print(f"standalone all-reduce 27541504 B: {ms:.4f} ms, busbw {algbw * 2 * (world - 1) / world:.1f} GB/s", flush=True)
    dist.destroy_process_group()
if __name__ == "__main__":
    mp.spawn(work, args=(2,), nprocs=2)
PY
  grep standalone "$out/logs/allreduce_ref.log" | tee -a "$summary"
fi
echo "==== summary ($summary)"
cat "$summary"
