#!/usr/bin/env bash
# Purpose: the core issue's GPU acceptance check in one call on a GPU machine: GPU unit tests, the 2-GPU vs 1-GPU
# weight check, mgpu_bench on 1 and 2 GPUs for medium/large at batch 32/128 (plus the study's Tree/Simple NCCL
# setting), every file read back with h5py, and a bad-input check. Logs and results go to $OUT; a table comes last.
# Usage: BIN_DIR=dir-with-binaries OUT=dir bash bench/gpu_acceptance.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BIN_DIR:-$root/build}"
out="${OUT:-/tmp/mgpu_acceptance}"
runs="${RUNS:-50}"
mkdir -p "$out/results"
log="$out/acceptance.log"
# NVLink multicast stays off on shared machines (GPU-MACHINES.md); mpirun passes it to every rank.
export NCCL_NVLS_ENABLE=0
# Logs, not a terminal: plain progress lines (Open MPI would give rank 0 a pseudo-terminal anyway).
export MGPU_PROGRESS=plain
mpirun=(mpirun --allow-run-as-root -x NCCL_NVLS_ENABLE=0 -x MGPU_PROGRESS)
python=$(command -v python3)
status=0
note() { echo "$*" | tee -a "$log"; }
check() {  # check NAME COMMAND...: runs it, logs it, remembers a failure
  note "## $1"; shift
  "$@" >>"$log" 2>&1 || { note "FAILED ($?): $*"; status=1; }
}

{ nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv; } >>"$log" 2>&1
check "CUDA unit tests" "$bin/test_cuda_mlp"
check "GPU description tests" "$bin/test_gpu_devices"
check "2 GPUs vs 1 GPU weights" "${mpirun[@]}" -np 2 "$bin/test_cuda_data_parallel"

table=()
for model in medium large; do
  for batch in 32 128; do
    for ranks in 1 2; do
      file="$out/results/${model}_b${batch}_n${ranks}.h5"
      check "mgpu_bench $model b$batch n$ranks" "${mpirun[@]}" -np "$ranks" "$bin/mgpu_bench" --model "$model" \
        --batch "$batch" --runs "$runs" --output "$file" --force
      table+=("$("$python" "$root/tests/check_results_h5py.py" "$file" --expect-runs "$runs" --expect-ranks "$ranks" --expect-complete 2>&1 | tail -n 1)")
    done
  done
done
file="$out/results/large_b32_n2_tree_simple.h5"
check "mgpu_bench large b32 n2 Tree/Simple" "${mpirun[@]}" -np 2 "$bin/mgpu_bench" --model large --batch 32 \
  --runs "$runs" --nccl-algo tree --nccl-proto simple --output "$file" --force
table+=("tree/simple $("$python" "$root/tests/check_results_h5py.py" "$file" 2>&1 | tail -n 1)")
"$python" -c "import h5py,sys; g=h5py.File(sys.argv[1])['configurations']; c=g[list(g)[0]]; print('recorded:', c.attrs['nccl_algo'], c.attrs['nccl_proto'], list(c.attrs['nccl_environment']), list(c.attrs['peer_topology']))" "$file" >>"$log" 2>&1

# More ranks than GPUs must be refused with one line, not shared silently.
gpus=$(nvidia-smi -L | grep -c '^GPU')
note "## $((gpus + 1)) ranks on $gpus GPUs (must fail)"
if "${mpirun[@]}" --oversubscribe -np $((gpus + 1)) "$bin/mgpu_bench" --device cuda --batch $((30 * (gpus + 1))) --output "$out/results/bad.h5" >>"$log" 2>&1; then
  note "FAILED: accepted more ranks than GPUs"; status=1
fi
[[ -e "$out/results/bad.h5" ]] && { note "FAILED: left bad.h5 behind"; status=1; }

# A configuration that cannot fit in GPU memory must be refused before anything is allocated.
note "## batch too large for GPU memory (must fail)"
if "${mpirun[@]}" -np 1 "$bin/mgpu_bench" --model large --batch 16777216 --output "$out/results/huge.h5" >>"$log" 2>&1; then
  note "FAILED: accepted a batch that cannot fit"; status=1
fi
[[ -e "$out/results/huge.h5" ]] && { note "FAILED: left huge.h5 behind"; status=1; }

tar -C "$out" -czf "$out/results.tar.gz" results && rm -rf "$out/results"
echo; echo "=== 2 ranks vs 1 GPU, weights after 20 steps"; grep -h "^rank 0: .*||params" "$log"
echo "=== refused as they must be"
grep -h -A1 -e "ranks on .* GPUs (must fail)" -e "too large for GPU memory (must fail)" "$log" | grep "mgpu_bench: error"
echo "=== test summary"; grep -hE "^\[  (PASSED|FAILED|SKIPPED) " "$log"
echo "=== configurations (mean ms per phase: max over ranks, mean over measured steps and runs)"
printf '%s\n' "${table[@]}"
echo "=== status $status"
exit $status
