#!/usr/bin/env bash
# Purpose: tests/gpu/gpu_tests.sh on a machine of one GPU and of none, with stand-in binaries (no GPU needed): on one
# GPU every 1-GPU row runs and passes, every row that needs 2 or 4 GPUs reads "not run: needs N GPUs" and the script
# exits 0; with none nothing runs and it exits 1.
# Usage: gpu_tests_one_gpu_test.sh WORK_DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?WORK_DIR}"
rm -rf "$work"
mkdir -p "$work/bin"
fail() { echo "FAILED: $*"; exit 1; }

# Each test binary passes 3 tests; mgpu_bench refuses a wrong GEMM as the real one does and must not run otherwise
# (the rows that run it on more GPUs are not run).
for test in test_cuda_mlp test_skinny_gemm test_relu_dropout_backward_bias test_generate_batch test_gpu_devices \
  test_loss_buffer test_tuned_gemm test_gpu_clocks test_hold_sms test_tf32_split_kernels test_cuda_trainer \
  test_persistent_step test_weight_gradient_adam test_nccl_communicator test_cuda_data_parallel; do
  printf '#!/bin/sh\necho "[==========] 3 tests from 1 test suite ran. (1 ms total)"\necho "[  PASSED  ] 3 tests."\n' \
    >"$work/bin/$test"
done
cat >"$work/bin/mgpu_bench" <<'STANDIN'
#!/bin/sh
if [ "${MGPU_FAULT_CORRUPT_GEMM:-0}" = 1 ]; then
  echo "mgpu_bench: error: large_b32_n1_cuda: the math check failed: stand-in" >&2
  exit 1
fi
echo "stand-in mgpu_bench: only the wrong-GEMM row may run it on one GPU" >&2
exit 3
STANDIN
chmod +x "$work/bin"/*

GPUS=1 BIN_DIR="$work/bin" OUT="$work/one" bash "$root/tests/gpu/gpu_tests.sh" >"$work/one.txt" 2>&1
rc=$?
cat "$work/one.txt"
((rc == 0)) || fail "gpu_tests.sh exited $rc on one GPU"
table="$work/one/table.md"
grep -q 'FAIL' "$table" && fail "a row failed on one GPU"
[[ $(grep -c '| ok' "$table") == 14 ]] || fail "expected the 13 one-GPU test rows and the wrong GEMM's row ok"
for row in 'test_nccl_communicator +\| +2 .*not run: needs 2 GPUs' \
  'test_cuda_data_parallel +\| +2 .*not run: needs 2 GPUs' 'test_cuda_data_parallel +\| +4 .*not run: needs 4 GPUs' \
  'mgpu_bench large 64, losses +\| +1,2 .*not run: needs 2 GPUs'; do
  grep -Eq "$row" "$table" || fail "no row matching '$row'"
done

GPUS=0 BIN_DIR="$work/bin" OUT="$work/none" bash "$root/tests/gpu/gpu_tests.sh" >"$work/none.txt" 2>&1
rc=$?
((rc == 1)) || fail "gpu_tests.sh exited $rc without a GPU, expected 1"
grep -q 'nothing could run' "$work/none.txt" || fail "without a GPU it does not say that nothing could run"
grep -q '| ok' "$work/none/table.md" && fail "a row ran without a GPU"
echo "PASSED: one GPU runs every 1-GPU row and passes; none runs nothing and fails"
