# Purpose: what the Slurm tests share (sourced by slurm_cluster_test.sh and two_node_cluster_test.sh): a munged with
# the test's own key and socket, and the slurm.conf lines of a test cluster with root daemons, no cgroups and no
# accounting. Both take the test's directory, which holds the key, the socket, the pid files and the state.

# start_munge DIR: munged on DIR/munge.sock with a key made for it (its pid in DIR/munged.pid); fails if it does not
# come up within 5 s.
start_munge() {
  local dir="$1"
  mungekey --create --keyfile="$dir/munge.key" --force
  chmod 600 "$dir/munge.key"
  munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
  for _ in $(seq 1 50); do [[ -S "$dir/munge.sock" ]] && return 0; sleep 0.1; done
  echo "munged did not start"
  return 1
}

# slurm_conf_common DIR: the slurm.conf lines every test cluster shares (the caller adds the cluster's name, hosts,
# ports, files and nodes).
slurm_conf_common() {
  local dir="$1"
  cat <<CONF
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
CONF
}
