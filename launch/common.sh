# Purpose: what every launcher in launch/ shares (sourced, not run): the binary, the environment preset, and the
# mpirun flags that carry it to every rank.
#   mgpu_take_preset_option "$@"  -> sets MGPU_PRESET from a leading --preset NAME and leaves the rest in MGPU_ARGS
#   mgpu_apply_preset             -> exports the preset's variables (NCCL_NVLS_ENABLE=0 always) over the caller's
#                                    NCCL_* variables, keeping those that select the network (mgpu_is_network_selection),
#                                    MGPU_ENVIRONMENT_PRESET, which mgpu_bench records, and MGPU_PROGRESS (line on a
#                                    terminal, plain otherwise)
#   mgpu_mpirun_env_flags         -> "-x NAME" for each of them (mpirun forwards only what -x names to remote nodes)
#   mgpu_mpirun_root_flags        -> --allow-run-as-root when run as root
#   mgpu_default_shared_memory_transport -> Open MPI's shared-memory transport without cross-memory attach, unless set
#   mgpu_nvidia_smi_gpus          -> the number of GPUs nvidia-smi lists (0 without nvidia-smi)

mgpu_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The binary: MGPU_BENCH, else the source tree's build/, else an installed tree's (cmake --install: these launchers in
# PREFIX/share/mgpu_bench/launch, the programs in PREFIX/bin).
if [[ -z "${MGPU_BENCH:-}" ]]; then
  MGPU_BENCH="$mgpu_root/build/mgpu_bench"
  if [[ ! -x "$MGPU_BENCH" && -x "$mgpu_root/../../bin/mgpu_bench" ]]; then
    MGPU_BENCH="$(cd "$mgpu_root/../../bin" && pwd)/mgpu_bench"
  fi
fi
MGPU_PRESET="${MGPU_PRESET:-none}"

mgpu_die() { echo "$(basename "$0"): error: $*" >&2; exit 2; }

# Launcher options come first; `--` (optional) ends them; everything else goes to mgpu_bench.
mgpu_take_preset_option() {
  MGPU_ARGS=()
  while (($#)); do
    case "$1" in
      --preset) (($# >= 2)) || mgpu_die "--preset needs a name"; MGPU_PRESET="$2"; shift 2 ;;
      --preset=*) MGPU_PRESET="${1#--preset=}"; shift ;;
      --np) (($# >= 2)) || mgpu_die "--np needs a number"; MGPU_NP="$2"; shift 2 ;;
      --) shift; MGPU_ARGS+=("$@"); return ;;
      *) MGPU_ARGS+=("$@"); return ;;
    esac
  done
}

# NCCL variables that select the network rather than how NCCL uses it: a preset keeps the caller's.
mgpu_is_network_selection() {
  case "$1" in
    NCCL_SOCKET_IFNAME | NCCL_SOCKET_FAMILY | NCCL_IB_HCA | NCCL_IB_GID_INDEX | NCCL_IB_SL | NCCL_IB_TC | \
      NCCL_IB_ROCE_VERSION_NUM | NCCL_IB_ADDR_FAMILY | NCCL_IB_ADDR_RANGE | NCCL_NET | NCCL_NET_PLUGIN | \
      NCCL_IB_DISABLE | NCCL_CROSS_NIC | NCCL_COLLNET_ENABLE) return 0 ;;
  esac
  return 1
}

mgpu_preset_names() { (cd "$mgpu_root/launch/presets" && ls -1 *.env | sed 's/\.env$//' | tr '\n' ' '); }

MGPU_FORWARDED_VARIABLES=()
mgpu_apply_preset() {
  if [[ "$MGPU_PRESET" != none ]]; then
    local file="$mgpu_root/launch/presets/$MGPU_PRESET.env"
    [[ -f "$file" ]] || mgpu_die "--preset '$MGPU_PRESET': unknown preset (choose from: none $(mgpu_preset_names))"
    # A preset is NCCL's algorithm, protocol and transport choices: the caller's own choices of those would mix in
    # unrecorded intent, so they go. The caller's network selection (which interface and HCA, the GID index, ...)
    # stays: a preset cannot know a cluster's fabric, and a multi-node job needs it. mgpu_bench records both.
    local name
    for name in $(compgen -e | grep '^NCCL_' || true); do
      mgpu_is_network_selection "$name" || unset "$name"
    done
    local line
    while IFS= read -r line || [[ -n "$line" ]]; do
      line="${line%%#*}"; line="${line//[[:space:]]/}"
      [[ -z "$line" ]] && continue
      [[ "$line" =~ ^[A-Z_][A-Z0-9_]*=.*$ ]] || mgpu_die "$file: bad line '$line' (want NAME=value)"
      export "${line?}"
      MGPU_FORWARDED_VARIABLES+=("${line%%=*}")
    done < "$file"
  fi
  export NCCL_NVLS_ENABLE=0 MGPU_ENVIRONMENT_PRESET="$MGPU_PRESET"
  # mgpu_bench draws its progress on stderr, which Open MPI hands a rank as a pipe whatever ours is: tell it whether
  # ours is a terminal, so a terminal gets the line redrawn in place and a log plain progress lines.
  if [[ -z "${MGPU_PROGRESS:-}" ]]; then
    if [[ -t 2 ]]; then export MGPU_PROGRESS=line; else export MGPU_PROGRESS=plain; fi
  fi
  MGPU_FORWARDED_VARIABLES+=(NCCL_NVLS_ENABLE MGPU_ENVIRONMENT_PRESET MGPU_PROGRESS)
  # Variables the caller set (no preset) travel too, so every rank sees what rank 0 records.
  for name in $(compgen -e | grep '^NCCL_' || true); do MGPU_FORWARDED_VARIABLES+=("$name"); done
  mgpu_default_shared_memory_transport
  echo "# $(basename "$0"): environment preset $MGPU_PRESET:$(for v in $(printf '%s\n' "${MGPU_FORWARDED_VARIABLES[@]}" | sort -u); do printf ' %s=%s' "$v" "${!v}"; done)"
}

mgpu_mpirun_env_flags() {
  local name
  for name in $(printf '%s\n' "${MGPU_FORWARDED_VARIABLES[@]}" | sort -u); do printf -- '-x\n%s\n' "$name"; done
}

# Containers often lack the cross-memory attach Open MPI's shared-memory transport tries first.
mgpu_default_shared_memory_transport() {
  export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
}

mgpu_nvidia_smi_gpus() {
  if command -v nvidia-smi >/dev/null 2>&1; then nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; else echo 0; fi
}

# Open MPI refuses to start as root without consent (containers, the GPU machines).
mgpu_mpirun_root_flags() { if [[ $EUID -eq 0 ]]; then echo --allow-run-as-root; fi; }

mgpu_require_binary() {
  [[ -x "$MGPU_BENCH" ]] || mgpu_die "no mgpu_bench at $MGPU_BENCH (build it: launch/build.sh, or set MGPU_BENCH)"
}
