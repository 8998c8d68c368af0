#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for testing profiles/slurm (make slurm-test).
#
#   scripts/slurm_cluster.sh install   Debian's slurm-wlm and munge (as root or with sudo)
#   scripts/slurm_cluster.sh start     write the configuration into $HALLUSCOPE_SLURM_DIR, start
#                                      munged, slurmctld and slurmd; wait until the node is idle
#   scripts/slurm_cluster.sh stop      cancel every job of this cluster, stop the three daemons
#   scripts/slurm_cluster.sh env       the variable that points SLURM's commands at this cluster
#
# Everything lives in one folder (default /tmp/halluscope-slurm): slurm.conf, gres.conf, munge
# key and socket, state, spool, logs, and jobcomp.txt (one line per finished job). The client
# commands find the cluster through SLURM_CONF=<dir>/slurm.conf, and through symbolic links
# /etc/slurm/{slurm,gres}.conf while it runs: inside a job the SLURM executor's job step drops
# every SLURM_* variable but the job's ids before it calls srun, which then reads the default
# path (as on a real cluster's nodes). `start` refuses when /etc/slurm/slurm.conf is anything
# else; `stop` removes the links.
# No slurmdbd: profiles/slurm asks the executor to poll job states with squeue, which sees every
# job for MinJobAge (1 day here, longer than any test run). Two partitions mirror the profile's: `cpu` (default) and
# `gpu`, both on this node; the node declares one pretend GRES gpu (/dev/null), so a job that
# asks for a GPU is scheduled into `gpu` and gets it, while nothing runs on a real GPU.
set -euo pipefail

DIR=${HALLUSCOPE_SLURM_DIR:-/tmp/halluscope-slurm}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
DEBIAN_PACKAGES="slurm-wlm munge"

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo "$@"
    else echo "slurm_cluster.sh: needs root (or sudo) for: $*" >&2; exit 1; fi
}

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v munged >/dev/null && command -v sbatch >/dev/null; then
        return 0
    fi
    echo "installing Debian packages: $DEBIAN_PACKAGES"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        $DEBIAN_PACKAGES
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

ETC=/etc/slurm
LINKED="slurm.conf gres.conf"

link_config() {
    local name
    for name in $LINKED; do
        if [ -e "$ETC/$name" ] && [ "$(readlink "$ETC/$name")" != "$DIR/$name" ]; then
            echo "slurm_cluster.sh: $ETC/$name exists and is not this test cluster's;" \
                "not starting a test cluster on a configured SLURM machine" >&2
            return 1
        fi
    done
    as_root mkdir -p "$ETC"
    for name in $LINKED; do as_root ln -sfn "$DIR/$name" "$ETC/$name"; done
}

unlink_config() {
    local name
    for name in $LINKED; do
        if [ -L "$ETC/$name" ] && [ "$(readlink "$ETC/$name")" = "$DIR/$name" ]; then
            as_root rm -f "$ETC/$name"
        fi
    done
}

write_config() {
    local node cpus mem line
    line=$(slurmd -C | head -1)               # NodeName=... CPUs=... RealMemory=...
    node=$(sed -n 's/.*NodeName=\([^ ]*\).*/\1/p' <<<"$line")
    cpus=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<<"$line")
    mem=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$line")
    mkdir -p "$DIR"/{state,spool,log,munge}
    chmod 700 "$DIR/munge"
    if [ ! -f "$DIR/munge/munge.key" ]; then
        head -c 1024 /dev/urandom >"$DIR/munge/munge.key"
        chmod 400 "$DIR/munge/munge.key"
    fi
    cat >"$CONF" <<EOF
# Written by scripts/slurm_cluster.sh: a single-node test cluster for profiles/slurm.
ClusterName=halluscope-test
SlurmctldHost=$node
SlurmUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldPort=${HALLUSCOPE_SLURMCTLD_PORT:-6817}
SlurmdPort=${HALLUSCOPE_SLURMD_PORT:-6818}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MinJobAge=86400
ReturnToService=2
SlurmdTimeout=60
GresTypes=gpu
NodeName=$node CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=cpu Nodes=$node Default=YES MaxTime=1-00:00:00 State=UP
PartitionName=gpu Nodes=$node MaxTime=1-00:00:00 State=UP
EOF
    # One pretend GPU: SLURM drops a GRES gpu without a device file, so it names /dev/null;
    # with task/none nothing is bound to it. SLURM schedules and counts it, nothing computes on it.
    printf 'AutoDetect=off\nNodeName=%s Name=gpu File=/dev/null\n' "$node" >"$DIR/gres.conf"
    # What the executor plugin may choose from (profiles/slurm/partitions.yaml has the same
    # keys for a real site): the limits of this cluster, so an impossible request has no match.
    cat >"$DIR/partitions.yaml" <<EOF
partitions:
  cpu: {max_runtime: 1440, max_mem_mb: $mem, max_threads: $cpus, max_gpu: 0}
  gpu: {max_runtime: 1440, max_mem_mb: $mem, max_threads: $cpus, max_gpu: 1}
EOF
}

start() {
    install
    if pid_alive "$DIR/slurmctld.pid"; then
        echo "slurm_cluster.sh: already running (SLURM_CONF=$CONF)" >&2
        return 0
    fi
    write_config
    link_config
    munged --force --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge/munged.seed"
    slurmctld -c -f "$CONF"      # -c: no jobs left from an earlier start
    slurmd -f "$CONF"
    local i
    for i in $(seq 60); do
        if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
            echo "SLURM test cluster up: SLURM_CONF=$CONF"
            sinfo
            return 0
        fi
        sleep 1
    done
    echo "slurm_cluster.sh: the node did not become idle within 60 s; logs in $DIR/log" >&2
    sinfo -N -l >&2 || true
    tail -n 20 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
    stop
    return 1
}

stop() {
    if pid_alive "$DIR/slurmctld.pid"; then
        # every job of this cluster (it runs nothing else), then the daemons
        scancel --full --quiet $(squeue -h -o '%i' 2>/dev/null) 2>/dev/null || true
        local i
        for i in $(seq 30); do
            [ -z "$(squeue -h -o '%i' 2>/dev/null)" ] && break
            sleep 1
        done
        scontrol shutdown >/dev/null 2>&1 || true
    fi
    local name
    for name in slurmctld slurmd; do
        for i in $(seq 30); do pid_alive "$DIR/$name.pid" || break; sleep 1; done
        if pid_alive "$DIR/$name.pid"; then kill "$(cat "$DIR/$name.pid")" || true; fi
    done
    if pid_alive "$DIR/munge/munged.pid"; then
        kill "$(cat "$DIR/munge/munged.pid")" || true
        for i in $(seq 10); do pid_alive "$DIR/munge/munged.pid" || break; sleep 1; done
    fi
    unlink_config
    echo "SLURM test cluster stopped"
}

case "${1:-}" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    env) echo "SLURM_CONF=$CONF" ;;
    *) echo "usage: $0 install|start|stop|env" >&2; exit 2 ;;
esac
