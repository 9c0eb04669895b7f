# Purpose: what the GPU scripts in bench/ share (sourced, not run): NVLink multicast off and plain progress lines in
# the environment, the mpirun command that carries both to every rank, note() (a line to the terminal and $log), and
# start_pass_study (the start of a study of passes over GPU counts).
# NVLink multicast off, for machines where NVLink SHARP is unavailable; mpirun passes it to every rank.
export NCCL_NVLS_ENABLE=0
# Logs, not a terminal: plain progress lines (Open MPI would give rank 0 a pseudo-terminal anyway).
export MGPU_PROGRESS=plain
mpirun=(mpirun --allow-run-as-root -x NCCL_NVLS_ENABLE=0 -x MGPU_PROGRESS)
# MPIRUN_ARGS: more launcher options for every script (e.g. --oversubscribe: more ranks than cores on a CPU rehearsal).
read -r -a mpirun_args <<<"${MPIRUN_ARGS:-}"
mpirun+=("${mpirun_args[@]}")
# note TEXT...: prints it and appends it to the sourcing script's $log.
note() { echo "$*" | tee -a "$log"; }
# start_pass_study NAME: how a study of whole processes in passes over GPU counts (ceiling_grid.sh,
# overlap_levers.sh) starts, once it has set $root and $out: bin (BIN_DIR, default build/), runs (RUNS, 10), device
# (DEVICE, auto), extra (EXTRA: mgpu_bench options of every process), python, the log $out/NAME.log started empty,
# and gpus: GPUS, or 2 for a rehearsal on the CPU fallback (DEVICE=cpu), else every GPU nvidia-smi lists. Fewer than 2
# GPUs end the script with one line naming it.
start_pass_study() {
  local name=$1
  bin="$(cd "${BIN_DIR:-$root/build}" && pwd)"
  runs="${RUNS:-10}"
  device="${DEVICE:-auto}"
  read -r -a extra <<<"${EXTRA:-}"
  mkdir -p "$out"
  log="$out/$name.log"
  : >"$log"
  python=$(command -v python3)
  if [[ "$device" == cpu ]]; then gpus="${GPUS:-2}"; else gpus="${GPUS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}"; fi
  ((gpus >= 2)) || { echo "$name: needs 2 GPUs or more (GPUS=$gpus)" >&2; exit 2; }
}
