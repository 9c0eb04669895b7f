#!/usr/bin/env bash
# Purpose: compute-sanitizer over the CUDA tests and over the product itself. Part "tests": memcheck (leaks included),
# initcheck, synccheck and racecheck over test_cuda_mlp, test_skinny_gemm, test_gpu_devices and the kernel tests. Part
# "product": mgpu_bench's short runs (--runs 1 --warmup 0 --steps 3; racecheck's one step) over a grid that reaches
# every code path of the step (both presets and a --layers model; local batch 1 to 4096 around every kernel threshold;
# graph on and off; fused optimizer on and off; overlap off, deferred and layerwise; GEMM tuning step and alone; fp32,
# tf32, tf32x3, bf16 and --grad-dtype bf16; --accumulate 2; --optimizer-sharding on; the persistent step kernel; 1, 2
# and 4 ranks, each rank under the sanitizer), `mgpu_bench probe` and `mgpu_bench allreduce`: memcheck and initcheck
# over the whole grid, synccheck and racecheck over the rows marked "subset", which still launch every kernel of ours.
# A table (tool, what ran, configurations or tests, errors, seconds) follows. It passes only when every run has 0
# sanitizer errors in our code and exits 0, every test passes and none is skipped. racecheck's hazards inside a
# library's kernel (one outside namespace mgpu: cuBLAS's, NCCL's) are named in the row's verdict but not counted
# against it (docs/testing.md).
# Usage (from the repository root): BIN_DIR=build/tests BENCH=build/mgpu_bench OUT=/tmp/sanitizer \
#   bash tests/gpu/compute_sanitizer.sh
# Knobs: PARTS (default "tests product"), TOOLS (default "memcheck initcheck synccheck racecheck"), LANES=N (that many
# copies at once taking the product's work from one queue, 2-rank work first; lane i sees GPUs i and i+1 modulo the
# GPU count, so lanes may share GPUs; one lane a GPU keeps racecheck's long kernels apart), SPLIT=configurations (one
# mgpu_bench run per batch of a row instead of one per row, so that lanes share a row's configurations), SHARD=i/n
# (the product rows whose index is i modulo n, for copies started by hand with their own CUDA_VISIBLE_DEVICES; 2-rank
# rows need two visible GPUs), GPUS (the device numbers LANES spreads over, default every GPU nvidia-smi lists), RANKS
# (the rows of these rank counts, default "1 2"; "4" takes the two 4-rank rows, the default step of 4 GPUs: overlap
# from a local batch of 1024), ROWS (the product rows of these indexes, counted from 1 in the order
# below, default every row; INDEX:B,B takes only those global batches of the row), ROW_TIMEOUT (seconds per
# mgpu_bench run, default 1200), TUNING=plan (each training run
# first runs plainly with the same arguments and the sanitized run takes that run's GEMM plan, --gemm-plan: its set-up
# verifies the planned kernels and skips the tuner's timing, which dominates under a sanitizer; rows with
# --gemm-tuning alone keep tuning, and the rows run without TUNING=plan cover the tuner),
# KERNEL_FILTER (the product's racecheck and synccheck check the kernels compute-sanitizer's --kernel-name filter
# matches, default "kns=mgpu": ours; "" checks every kernel), KERNEL_EXCLUDE (kernels those two tools skip in the
# product, compute-sanitizer's --kernel-name-exclude, default "kns=reference_gemm"; "" skips none), MPIRUN (default
# "mpirun --allow-run-as-root --bind-to none"), COMPUTE_SANITIZER (the executable).
# docs/testing.md says which tests racecheck runs and which of our shared-memory kernels each covers.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="$(cd "${BIN_DIR:-$root/build/tests}" && pwd)"
bench="${BENCH:-$root/build/mgpu_bench}"
out="${OUT:-/tmp/mgpu_compute_sanitizer}"
tools=(${TOOLS:-memcheck initcheck synccheck racecheck})
parts=" ${PARTS:-tests product} "
shard="${SHARD:-0/1}"
row_timeout="${ROW_TIMEOUT:-1200}"
row_ranks="${RANKS:-1 2}"
row_indexes=" ${ROWS:-} "
kernel_filter="${KERNEL_FILTER-kns=mgpu}"
kernel_exclude="${KERNEL_EXCLUDE-kns=reference_gemm}"
# Unbound: Open MPI binds each rank of a run of one or two ranks to a core, counted from the first core afresh in every
# mpirun, so the lanes' runs would all share core 0 (and core 1) with the sanitizer's own threads. A 1-rank racecheck
# of medium batch 17 took 18 s unbound and was stopped unfinished at 170 s bound, four lanes on four H100s.
read -r -a mpirun <<< "${MPIRUN:-mpirun --allow-run-as-root --bind-to none}"
sanitizer="${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
binaries=(test_cuda_mlp test_skinny_gemm test_gpu_devices test_relu_dropout_backward_bias test_generate_batch
  test_weight_gradient_adam)
mkdir -p "$out"
: >"$out/rows.md"
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"

# The table of every row so far ($out/rows.md), also into $out/table.md.
print_table() {
  {
    echo "| tool      | what ran (binary, or ranks and mgpu_bench arguments)         | tests or configurations | errors | seconds | verdict |"
    echo "|-----------|--------------------------------------------------------------|-------|--------|---------|---------|"
    cat "$out/rows.md"
  } | tee "$out/table.md"
}

# racecheck only looks at shared memory and costs minutes per large GEMM, so it runs the smallest tests that still
# launch every kernel of ours with shared memory (docs/testing.md, "compute-sanitizer"): the skinny GEMM in every
# configuration (one block, cluster and last-block sums) on ragged shapes and with accumulation; the batch generator,
# the bias-gradient and loss kernels (block_sum) on the small models; the fused weight-gradient + Adam kernel, and
# with the batch split over a cluster (every split, small models); the output head. test_gpu_devices launches no
# kernel of ours.
racecheck_filter() {
  case "$1" in
    test_skinny_gemm) echo "SkinnyGemmTest.RaggedAndPaddedShapesMatchFloat64:SkinnyGemmTest.AccumulateAddsToC" ;;
    test_cuda_mlp)
      echo "CudaMlpTest.BatchGenerationMatchesCpu:Cuda/CudaMlpReference.LossAndGradientsMatchFloat64Reference/odd_*:\
Cuda/CudaMlpReference.FusedWeightGradientAdamMatchesFloat64Reference/small_*:\
Cuda/CudaOutputHead.MatchesFloat64ReferenceAndFeedsTheFusedStep/odd_b33_*" ;;
    test_weight_gradient_adam) echo "WeightGradientAdamTest.AnAccumulatedSumIsAddedBeforeTheScale" ;;
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

# The product's racecheck and synccheck look at our kernels only (every one is in namespace mgpu, so its name holds
# "mgpu"; KERNEL_FILTER="" checks every kernel): cuBLAS's and NCCL's are not ours to fix, and each instrumented kernel
# multiplies a configuration's time under these tools. Nor do they check the float64 reference GEMM that verifies each
# planned kernel at set-up: two thirds of a medium configuration's racecheck time, and the tests part checks it on
# ragged tiles (test_cuda_mlp tunes the odd model's shapes). memcheck and initcheck still check every kernel.
product_tool_options() {
  tool_options "$1"
  [[ "$1" == racecheck || "$1" == synccheck ]] || return 0
  [[ -z "$kernel_filter" ]] || echo "--kernel-name $kernel_filter"
  [[ -z "$kernel_exclude" ]] || echo "--kernel-name-exclude $kernel_exclude"
}

# The length of a training run under a tool: --runs 1 --warmup 0 --steps 3. racecheck looks for hazards on shared
# memory inside each launch, and every step of a run launches the same kernels at the same shapes: it runs the fewest
# steps that launch each of them, one (two with --accumulate 2: the accumulating and the updating step, so that the
# set-up's warm-up, the math check and the run each hold both), and no phase-marked run (--timing none), whose
# kernels are the unmarked run's with events between them.
run_length_words() {
  local tool="$1" args="$2" steps=3 timing=""
  if [[ "$tool" == racecheck ]]; then
    steps="$(sed -nE 's/.*--accumulate ([0-9]+).*/\1/p' <<< "$args")"
    steps="${steps:-1}" timing="--timing none"
  fi
  echo "--runs 1 --warmup 0 --steps $steps $timing --timeout 0"
}

# Errors counted against a run, "COUNTED NOT_OURS", from its logs. A log's errors: its ERROR SUMMARY line, or
# racecheck's RACECHECK SUMMARY errors when more (its warnings are not errors); a log without a summary, or a missing
# one (a crash, or a row stopped at its time limit), counts as one error. Not counted, two probes of NCCL's own whose
# failing answer it expects: at communicator creation it asks cudaFuncGetAttributes about each of its kernels and is
# answered cudaErrorNoKernelImageForDevice for those built for other GPUs (20 per rank with NCCL 2.28 on Hopper); and
# before sharing a user buffer with a peer (the sharded optimizer's all-gather of the large model) it asks
# cuMemRetainAllocationHandle whether the buffer came from cuMem*, is answered CUDA_ERROR_INVALID_VALUE for our
# cudaMalloc'd one and takes the legacy IPC handle instead. Only a printed report can be recognised, hence the high
# print limit. Nor are racecheck's hazards inside kernels not ours (NOT_OURS, which the row names): shared memory is
# private to a launch, so a hazard there comes from the library's own code run with an algorithm it accepts
# (cublasLtMatmulAlgoCheck), not from how we call it; what its products are worth, every planned kernel's verification
# and the math check say.
count_errors() { sanitizer_log counts "$@"; }

# Where the errors of these logs are, for the table: the CUDA call or the kernel each report names first, with its
# file:line when the log has one, the most frequent three with their counts ("output_head_kernel (output_head.cu:128)
# x2"), so that a failing row says where to look even when its logs stay on the machine that ran it.
error_sites() { sanitizer_log sites "$@"; }

# sanitizer_log counts LOG... | sites LOG...: both readings of compute-sanitizer's logs, one parser.
sanitizer_log() {
  python3 - "$@" <<'EOF_PY'
import collections, re, sys
mode, paths = sys.argv[1], sys.argv[2:]
EXPECTED = [("Program hit cudaErrorNoKernelImageForDevice", "cudaFuncGetAttributes"),
            ("Program hit CUDA_ERROR_INVALID_VALUE", "cuMemRetainAllocationHandle")]

def reports(text):
    """Each report of a log."""
    return re.split(r"\n========= (?=\S)", text)

def nccl_probe(report):
    return any(report.startswith(start) and call in report.split("\n", 1)[0] and "libnccl.so" in report
               for start, call in EXPECTED)

def site(report):
    """The CUDA call a host-side report names; else the kernel it names first, less namespaces and arguments."""
    call = re.match(r"Program hit .*? API call to (\w+)", report)
    if call:
        return call.group(1)
    found = re.search(r" at (?!0x|__shared__)(?:void )?(.+?)(?:\+0x[0-9a-f]+)?(?: in (\S+))?(?: \[\d+ hazards?\])?$",
                      report, re.M)
    if found:
        name = re.sub(r"\(anonymous namespace\)::", "", found.group(1))
        while re.search(r"<[^<>]*>", name):
            name = re.sub(r"<[^<>]*>", "", name)
        name = name.split("(", 1)[0].rsplit("::", 1)[-1]
        where = found.group(2)
        return f"{name} ({where.rsplit('/', 1)[-1]})" if where else name
    return None

def kernels(report):
    """The kernels a report's accesses are in (racecheck names two), before its host backtrace."""
    head = report.split("Saved host backtrace", 1)[0]
    return re.findall(r" at (?!0x|__shared__)(?:void )?(.+?)\+0x[0-9a-f]+", head)

def hazard_not_ours(report):
    """A racecheck error whose every access is in a kernel outside namespace mgpu."""
    named = kernels(report)
    return (re.match(r"Error: (Race reported|Potential \w+ hazard detected)", report) is not None and bool(named)
            and not any("mgpu::" in name for name in named))

def read(path):
    try:
        return open(path, errors="replace").read()
    except OSError:
        return None

def error_count(text):
    summary = [int(n) for n in re.findall(r"ERROR SUMMARY: (\d+) error", text or "")]
    races = [int(n) for n in re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) errors?", text or "")]
    if not summary and not races:
        return 1
    return max(0, max(summary[-1:] + races[-1:]) - sum(map(nccl_probe, reports(text))))

if mode == "counts":
    texts = [read(path) for path in paths]
    errors = sum(map(error_count, texts))
    # Only printed reports are seen: hazards beyond the print limit stay counted.
    not_ours = sum(hazard_not_ours(r) for text in texts for r in reports(text or ""))
    print(errors - not_ours, not_ours)
else:
    sites = collections.Counter(s for path in paths for r in reports(read(path) or "") if not nccl_probe(r)
                                for s in [site(r)] if s)
    shown = [f"{name} x{count}" for name, count in sites.most_common(3)]
    if len(sites) > 3:
        shown.append(f"{len(sites) - 3} more")
    print(", ".join(shown))
EOF_PY
}

# A passing row's verdict: "ok", or with the hazards in kernels not ours named ("ok; not ours: 15 hazards in nvjet_...
# x15").
ok_verdict() {
  local not_ours="$1"
  shift
  local noun=hazards
  ((not_ours == 1)) && noun=hazard
  if ((not_ours > 0)); then echo "ok; not ours: $not_ours $noun in $(error_sites "$@")"; else echo "ok"; fi
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

# The product's grid: "ranks|scope|arguments of mgpu_bench", scope "all" (memcheck and initcheck), "subset" (synccheck
# and racecheck too) or "subset:B,B" (racecheck takes only those batches; ROWS=INDEX:B,B still names any). Batches are
# global; on 2 ranks 2, 16, 64, 130 and 2048 are local batches 1, 8, 32, 65 and 1024, on 4 ranks 8 and 4096 are 2 and
# 1024. Every row measures each
# configuration once (--runs 1 gives one unmarked and one phase-marked run) with the watchdog off (the sanitizer slows
# every kernel by orders of magnitude). The probe's peak-rate GEMM runs the same code at m = n = k = 256 as at its
# default 8192, whose three products (fp32, tf32, bf16) are nearly all of the probe's FLOPs. Its racecheck and synccheck
# row (42) times one model at one batch, which runs every line of the probe's own: racecheck, which the probe needs
# checking every kernel (cuBLAS's cluster-launched ones included), had not finished both models at batch 16 in 555 s on
# an H100. Large TF32's racecheck takes batches 8 and 64: at 1024 every GEMM is cuBLASLt's (no kernel of ours that rows
# 13 and 14 do not run at a local batch of 1024), racecheck must check them (left unchecked, the cluster-launched ones
# end it in the internal error) and had not finished the set-up in 560 s alone on one H200.
product_rows() {
  local model tf32_race
  for model in large medium; do
    tf32_race=subset
    [[ "$model" == large ]] && tf32_race=subset:8,64
    cat <<ROWS
1|subset|--model $model --batch 1,8,15,16,17
1|subset|--model $model --batch 31,32,33,63,64,65
1|all|--model $model --batch 128,1024
1|all|--model $model --batch 4096
1|subset|--model $model --batch 1,17,64,65,128 --graph off
1|all|--model $model --batch 8,64,128 --fuse-optimizer off
1|all|--model $model --batch 8,64,128 --fuse-optimizer on
1|all|--model $model --batch 8,64,1024 --gemm-tuning alone
1|$tf32_race|--model $model --batch 8,64,1024 --precision tf32
1|subset|--model $model --batch 8,64,1024 --precision bf16
1|subset|--model $model --batch 8,64,128 --accumulate 2
2|all|--model $model --batch 2,16,64,130,2048 --gpus 2
2|subset|--model $model --batch 2,16,64,130,2048 --gpus 2 --overlap on --overlap-order deferred
2|subset|--model $model --batch 2,16,64,130,2048 --gpus 2 --overlap on --overlap-order layerwise
2|subset|--model $model --batch 16,130 --gpus 2 --grad-dtype bf16 --overlap on
2|all|--model $model --batch 16,130 --gpus 2 --graph off --overlap on
2|all|--model $model --batch 16,130 --gpus 2 --accumulate 2
ROWS
  done
  cat <<ROWS
1|subset|--layers 37,100,33,5 --batch 1,8,15,16,17,31,32,33
1|subset|--layers 37,100,33,5 --batch 63,64,65,128,1024
2|subset|--model medium --batch 16,130 --gpus 2 --precision bf16 --grad-dtype bf16
1|all|probe --model medium,large --batches 16,64,1024 --runs 1 --iters 2 --square 256
2|subset|allreduce --max-bytes 4M --runs 1 --iters 2 --warmup 1
2|subset|--model medium --batch 16,130 --gpus 2 --optimizer-sharding on
2|subset|--model large --batch 16,130 --gpus 2 --optimizer-sharding on
1|subset|probe --model medium --batches 16 --runs 1 --iters 2 --square 256
4|all|--model large --batch 8,4096 --gpus 4
4|all|--model medium --batch 8,4096 --gpus 4
1|subset|--model medium --batch 1,8,13,64,128 --step-kernel persistent
1|subset|--layers 37,100,33,5 --batch 1,17,64 --step-kernel persistent
1|all|--model large --batch 8,32 --step-kernel persistent
1|subset|--model large --batch 8,64,1024 --precision tf32x3
1|subset|--model medium --batch 8,64,1024 --precision tf32x3
ROWS
}

# Configurations a row measures: models x batches (a probe or all-reduce sweep counts as one).
row_configurations() {
  local args="$1" models batches
  [[ "$args" == probe* || "$args" == allreduce* ]] && { echo 1; return; }
  models="$(sed -nE 's/.*--(model|layers) ([^ ]+).*/\2/p' <<< "$args")"
  batches="$(sed -nE 's/.*--batch ([^ ]+).*/\1/p' <<< "$args")"
  [[ "$args" == *--layers* ]] && models="one"
  echo $(( $(tr ',' '\n' <<< "$models" | wc -l) * $(tr ',' '\n' <<< "$batches" | wc -l) ))
}

failed=0
add_row() {
  # Each row as soon as it is known, so a run cut short by a time limit still says what it checked.
  printf '| %-9s | %-60s | %5s | %6s | %7s | %s |\n' "$@" | tee -a "$out/rows.md"
}

# One product row under one tool: every rank of a 2-rank row runs under its own sanitizer, each with its own log.
run_product_row() {
  local tool="$1" index="$2" ranks="$3" args="$4"
  local name="$tool.product$2$(sed -nE 's/.*--batch ([^ ]+).*/_b\1/p' <<< "$4" | tr , -)" start=$SECONDS status
  local errors not_ours
  local options
  options="$(product_tool_options "$tool")"
  # shellcheck disable=SC2206 # the options are words
  local -a command=("$sanitizer" --tool "$tool" $options --log-file "$out/$name.pid%p.log" --print-limit 1000 "$bench")
  # shellcheck disable=SC2206 # the row's arguments are words
  local -a words=($args)
  local what="row $index, $ranks rank(s): ${args}"
  [[ "$options" != *"--kernel-name "* ]] || what+=" (kernels: $kernel_filter)"
  [[ "$options" != *--kernel-name-exclude* ]] || what+=" (not: $kernel_exclude)"
  case "${words[0]}" in
    probe) command+=("${words[@]}" --output "$out/$name.h5" --force) ;;
    allreduce) command+=("${words[@]}" --timeout 0 --output "$out/$name.h5" --force) ;;
    *)
      # shellcheck disable=SC2207 # the run length is words
      words+=($(run_length_words "$tool" "$args"))
      if [[ "${TUNING:-}" == plan && "$args" != *"--gemm-tuning alone"* ]]; then
        # The plan of a plain run of the same arguments; its time is not the row's.
        timeout "$row_timeout" "${mpirun[@]}" -np "$ranks" -x NCCL_NVLS_ENABLE "$bench" "${words[@]}" \
          --output "$out/$name.plan.h5" --force </dev/null >"$out/$name.plan.out" 2>&1 || {
          add_row "$tool" "$what" "$(row_configurations "$args")" 1 0 \
            "FAIL (the plain run for its plan; see $out/$name.plan.out)"
          failed=1
          return
        }
        start=$SECONDS
        words+=(--gemm-plan "$out/$name.plan.h5")
        what+=" (planned)"
      fi
      command+=("${words[@]}" --output "$out/$name.h5" --force)
      ;;
  esac
  # stdin closed: mpirun would otherwise read the rest of the row list the loop is reading.
  timeout "$row_timeout" "${mpirun[@]}" -np "$ranks" -x NCCL_NVLS_ENABLE "${command[@]}" </dev/null >"$out/$name.out" 2>&1
  status=$?
  read -r errors not_ours <<< "$(count_errors "$out/$name".pid*.log)"
  local verdict
  if ((status != 0 || errors != 0)); then
    # 124 is both timeout(1)'s status and mgpu_bench's watchdog's: only the time tells them apart.
    # The sanitizer's own failure is told apart from a finding: it checked nothing after it (docs/testing.md).
    local cause="" sites
    grep -qs "Internal Sanitizer Error" "$out/$name".pid*.log && cause="compute-sanitizer's internal error, "
    sites="$(error_sites "$out/$name".pid*.log)"
    verdict="FAIL (${cause}exit $status$( ((status == 124 && SECONDS - start >= row_timeout)) && echo ": over ${row_timeout} s")${sites:+; in $sites}; see $out/$name.*)"
    failed=1
  else
    verdict="$(ok_verdict "$not_ours" "$out/$name".pid*.log)"
  fi
  add_row "$tool" "$what" "$(row_configurations "$args")" "$errors" "$((SECONDS - start))" "$verdict"
}

# with_batches ARGS B,B: the mgpu_bench arguments with their --batch list replaced.
with_batches() { sed -E "s/--batch [^ ]+/--batch $2/" <<< "$1"; }

# The product's work: one line "tool|index|ranks|arguments" per mgpu_bench run, for the rows this copy takes (SHARD,
# RANKS, ROWS, and the tool's scope), in the order of ROWS when given, else 2-rank runs (the longest) first; with
# SPLIT=configurations one line per batch.
work_items() {
  local tool index ranks scope args shard_index="${shard%/*}" shard_count="${shard#*/}" batch batches priority named
  for tool in "${tools[@]}"; do
    index=0
    while IFS='|' read -r ranks scope args; do
      index=$((index + 1))
      ((index % shard_count == shard_index)) || continue
      if [[ "$scope" != subset* && ( "$tool" == synccheck || "$tool" == racecheck ) ]]; then continue; fi
      [[ " $row_ranks " == *" $ranks "* ]] || continue
      [[ "$row_indexes" == "  " || "$row_indexes" == *" $index "* || "$row_indexes" == *" $index:"* ]] || continue
      priority=$((3 - ranks))
      [[ "$row_indexes" == "  " ]] || priority="$(tr ' ' '\n' <<< "$row_indexes" | grep -v '^$' | grep -nE "^$index(:|$)" | cut -d: -f1)"
      named="$(tr ' ' '\n' <<< "$row_indexes" | sed -nE "s/^$index:([0-9,]+)$/\1/p")"
      # Batches ROWS names, else racecheck's of a "subset:B,B" row.
      [[ -z "$named" && "$scope" == subset:* && "$tool" == racecheck ]] && named="${scope#subset:}"
      [[ -z "$named" ]] || args="$(with_batches "$args" "$named")"
      batches="$(sed -nE 's/.*--batch ([^ ]+).*/\1/p' <<< "$args")"
      if [[ "${SPLIT:-}" == configurations && -n "$batches" ]]; then
        for batch in ${batches//,/ }; do
          echo "$priority|$tool|$index|$ranks|$(with_batches "$args" "$batch")"
        done
      else
        echo "$priority|$tool|$index|$ranks|$args"
      fi
    done < <(product_rows)
  done | sort -t'|' -s -n -k1,1 | cut -d'|' -f2-
}

# The next line of the shared queue, removed from it; nothing once it is empty.
next_queued_item() {
  flock "$QUEUE.lock" bash -c 'head -n 1 "$1"; sed -i 1d "$1"' _ "$QUEUE"
}

run_product() {
  local tool index ranks args
  if [[ -n "${QUEUE:-}" ]]; then
    local item
    while item="$(next_queued_item)" && [[ -n "$item" ]]; do
      IFS='|' read -r tool index ranks args <<< "$item"
      run_product_row "$tool" "$index" "$ranks" "$args"
    done
  else
    while IFS='|' read -r tool index ranks args; do
      run_product_row "$tool" "$index" "$ranks" "$args"
    done < <(work_items)
  fi
}

run_tests() {
# Shared memory must stay on one GPU: the tests use device 0.
local CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
export CUDA_VISIBLE_DEVICES
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
    "$sanitizer" --tool "$tool" $(tool_options "$tool") --log-file "$log" --print-limit 1000 \
      "$bin/$binary" --gtest_filter="$filter" --gtest_output="json:$report" > "$out/${tool}_${binary}.out" 2>&1
    status=$?
    seconds=$((SECONDS - start))
    read -r errors not_ours <<< "$(count_errors "$log")"
    read -r tests test_failures skipped <<< "$(gtest_counts "$report")"
    if ((status != 0 || errors != 0 || test_failures != 0 || skipped != 0 || tests == 0)); then
      sites="$(error_sites "$log")"
      verdict="FAIL (exit $status, $test_failures failed, $skipped skipped${sites:+; in $sites}; see $log)"
      failed=1
    else
      verdict="$(ok_verdict "$not_ours" "$log")"
    fi
    add_row "$tool" "$binary" "$tests" "$errors" "$seconds" "$verdict"
  done
done
}

# LANES=N (N > 1, SHARD unset): N copies of this script at once, each taking the product's next work item from one
# queue ($out/queue, under flock) until it is empty; the tests part runs in the first lane only. One table.
if [[ "${LANES:-1}" -gt 1 && -z "${SHARD:-}" ]]; then
  lanes="$LANES"
  read -r -a lane_gpus <<< "${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -oP '^GPU \K[0-9]+' | tr '\n' ' ')}"
  gpu_count="${#lane_gpus[@]}"
  ((gpu_count >= 1)) || { echo "compute_sanitizer: LANES=$lanes needs a GPU, none listed" >&2; exit 2; }
  work_items >"$out/queue"
  status=0
  lane_pids=()
  for ((lane = 0; lane < lanes; ++lane)); do
    visible="${lane_gpus[lane % gpu_count]}"
    ((gpu_count > 1)) && visible+=",${lane_gpus[(lane + 1) % gpu_count]}"
    lane_parts="product"
    ((lane == 0)) && lane_parts="$parts"
    CUDA_VISIBLE_DEVICES="$visible" LANES=1 QUEUE="$out/queue" PARTS="$lane_parts" OUT="$out/lane$lane" \
      bash "${BASH_SOURCE[0]}" >"$out/lane$lane.log" 2>&1 &
    lane_pids+=($!)
  done
  # Each lane waited for by its pid: `wait -n` can answer 127 (no job) once an ended lane has left bash's job table;
  # `wait PID` still finds its status.
  for pid in "${lane_pids[@]}"; do wait "$pid" || status=1; done
  cat "$out"/lane*/rows.md >"$out/rows.md"
  print_table
  exit "$status"
fi

[[ "$parts" == *" tests "* ]] && run_tests
[[ "$parts" == *" product "* ]] && run_product
print_table
exit "$failed"
