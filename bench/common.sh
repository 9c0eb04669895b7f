# Purpose: what the GPU scripts in bench/ share (sourced, not run): NVLink multicast off and plain progress lines in
# the environment, the mpirun command that carries both to every rank, and note() (a line to the terminal and $log).
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
