#!/usr/bin/env bash
# Purpose: the CUDA tests under compute-sanitizer on one GPU: memcheck (leaks included), initcheck, synccheck and
# racecheck over test_cuda_mlp, test_skinny_gemm, test_gpu_devices and the kernel tests, then a table (tool, binary,
# tests, errors, seconds). It passes only when every run has 0 sanitizer errors, every test passes and none is skipped.
# Usage (from the repository root, CUDA test binaries in BIN_DIR): BIN_DIR=build/tests OUT=/tmp/sanitizer \
#   bash bench/compute_sanitizer.sh
# Knobs: TOOLS (default "memcheck initcheck synccheck racecheck"), COMPUTE_SANITIZER (the executable).
# docs/testing.md says which tests racecheck runs and which of our shared-memory kernels each covers.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build/tests}" && pwd)"
out="${OUT:-/tmp/mgpu_compute_sanitizer}"
tools=(${TOOLS:-memcheck initcheck synccheck racecheck})
sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
binaries=(test_cuda_mlp test_skinny_gemm test_gpu_devices test_relu_dropout_backward_bias test_generate_batch)
mkdir -p "$out"
: >"$out/rows.md"
# Shared memory must stay on one GPU: the tests use device 0.
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"

# racecheck only looks at shared memory and costs minutes per large GEMM, so it runs the smallest tests that still
# launch every kernel of ours with shared memory (docs/testing.md, "compute-sanitizer"): the skinny GEMM in every
# configuration (one block, cluster and last-block sums) on ragged shapes and with accumulation; the batch generator,
# the bias-gradient and loss kernels (block_sum) on the small models; the fused weight-gradient + Adam kernel; the
# output head. test_gpu_devices launches no kernel of ours.
racecheck_filter() {
  case "$1" in
    test_skinny_gemm) echo "SkinnyGemmTest.RaggedAndPaddedShapesMatchFloat64:SkinnyGemmTest.AccumulateAddsToC" ;;
    test_cuda_mlp)
      echo "CudaMlpTest.BatchGenerationMatchesCpu:Cuda/CudaMlpReference.LossAndGradientsMatchFloat64Reference/odd_*:\
Cuda/CudaMlpReference.FusedWeightGradientAdamMatchesFloat64Reference/small_*:\
Cuda/CudaOutputHead.MatchesFloat64ReferenceAndFeedsTheFusedStep/odd_b33_*" ;;
    # Small tests: all of them (the bias-gradient sums' shared-memory and last-block paths, the batch generator).
    test_relu_dropout_backward_bias | test_generate_batch) echo "*" ;;
    *) echo "" ;;
  esac
}

# Sanitizer-specific options: memcheck also reports device memory never freed.
tool_options() {
  case "$1" in
    memcheck) echo "--leak-check full" ;;
    *) echo "" ;;
  esac
}

# Number of errors in a compute-sanitizer log: its ERROR SUMMARY line, or racecheck's RACECHECK SUMMARY errors when
# more (its warnings are not errors); a log without a summary (a crash) counts as one error.
sanitizer_errors() {
  local log="$1" count races
  count="$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$log" 2>/dev/null | grep -oE '[0-9]+' | tail -1)"
  races="$(grep -oE 'RACECHECK SUMMARY: [0-9]+ hazards? displayed \([0-9]+ errors?' "$log" 2>/dev/null |
    sed -E 's/.*\(([0-9]+) error.*/\1/' | tail -1)"
  # racecheck prints its own summary instead of memcheck's.
  if [[ -n "$races" ]] && ((races > ${count:-0})) || [[ -z "$count" && -n "$races" ]]; then count="$races"; fi
  echo "${count:-1}"
}

# Tests run, failed and skipped, from a gtest JSON report.
gtest_counts() {
  python3 - "$1" <<'EOF'
import json, sys
try:
    report = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("0 0 0"); sys.exit()
cases = [case for suite in report.get("testsuites", []) for case in suite.get("testsuite", [])]
failed = sum(1 for case in cases if case.get("failures"))
skipped = sum(1 for case in cases if case.get("result") == "SKIPPED")
print(len(cases), failed, skipped)
EOF
}

rows=()
failed=0
for tool in "${tools[@]}"; do
  for binary in "${binaries[@]}"; do
    filter="*"
    if [[ "$tool" == racecheck ]]; then
      filter="$(racecheck_filter "$binary")"
      [[ -n "$filter" ]] || continue
    elif [[ "$tool" == initcheck && "$binary" == test_cuda_mlp ]]; then
      # initcheck tracks every byte's initialisation and takes over 9 minutes for the whole binary on one H200; the
      # racecheck subset launches every kernel of ours (memcheck and synccheck still run every test).
      filter="$(racecheck_filter "$binary")"
    fi
    log="$out/${tool}_${binary}.log"
    report="$out/${tool}_${binary}.json"
    start=$SECONDS
    # shellcheck disable=SC2046 # the options are words
    "$sanitizer" --tool "$tool" $(tool_options "$tool") --log-file "$log" --print-limit 20 \
      "$bin/$binary" --gtest_filter="$filter" --gtest_output="json:$report" > "$out/${tool}_${binary}.out" 2>&1
    status=$?
    seconds=$((SECONDS - start))
    errors="$(sanitizer_errors "$log")"
    read -r tests test_failures skipped <<< "$(gtest_counts "$report")"
    verdict="ok"
    if ((status != 0 || errors != 0 || test_failures != 0 || skipped != 0 || tests == 0)); then
      verdict="FAIL (exit $status, $test_failures failed, $skipped skipped; see $log)"
      failed=1
    fi
    rows+=("$(printf '| %-9s | %-16s | %5s | %6s | %7s | %s |' "$tool" "$binary" "$tests" "$errors" "$seconds" "$verdict")")
    # Each row as soon as it is known, so a run cut short by a time limit still says what it checked.
    echo "${rows[-1]}" | tee -a "$out/rows.md"
  done
done

{
  echo "| tool      | binary           | tests | errors | seconds | verdict |"
  echo "|-----------|------------------|-------|--------|---------|---------|"
  printf '%s\n' "${rows[@]}"
} | tee "$out/table.md"
exit "$failed"
