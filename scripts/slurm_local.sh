#!/usr/bin/env bash
# A single-node Slurm on this machine, for testing the Slurm profile (needs root; Debian/Ubuntu).
#   scripts/slurm_local.sh start   install slurm-wlm + munge if absent, write a one-node config,
#                                  start munged, slurmctld, slurmd; wait until the node is idle
#   scripts/slurm_local.sh stop    stop the daemons it started, remove every file it created
# State lives under $SLURM_LOCAL_STATE (default /tmp/slurm-local); the config it writes goes to
# /etc/slurm/slurm.conf only when none exists there (and is removed again by 'stop').
# No accounting database: 'sacct' is unavailable, so Snakemake polls 'squeue'.
# SLURM_LOCAL_GPUS=N (default 0) makes the node advertise N GPUs as GRES without devices (gres.conf lines whose
# device files are empty files under the state folder): jobs that ask for GPUs are scheduled and see their GRES variables, and run on the CPU.
set -euo pipefail
STATE=${SLURM_LOCAL_STATE:-/tmp/slurm-local}
CONF=/etc/slurm/slurm.conf
GRES_CONF=/etc/slurm/gres.conf
GPUS=${SLURM_LOCAL_GPUS:-0}

start() {
  [ "$(id -u)" = 0 ] || { echo "slurm_local.sh: needs root (apt-get, daemons)" >&2; exit 3; }
  if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
  fi
  mkdir -p "$STATE"/{ctld,d,log,munge,run}
  for f in "$CONF" "$GRES_CONF"; do
    if [ -e "$f" ] && [ ! -e "$STATE/created_conf" ]; then
      echo "slurm_local.sh: $f exists and was not written by this script; refusing to touch it" >&2; exit 4
    fi
  done
  local host cpus mem gres_types="" node_gres=""
  host=$(hostname -s); cpus=$(nproc); mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  mkdir -p /etc/slurm
  if [ "$GPUS" -gt 0 ]; then
    gres_types="GresTypes=gpu"; node_gres="Gres=gpu:$GPUS"
    # Slurm counts a GPU only with a device file of its own: an empty file under $STATE stands in for each
    mkdir -p "$STATE/dev"
    for i in $(seq 0 $((GPUS - 1))); do
      touch "$STATE/dev/nvidia$i"; echo "NodeName=$host Name=gpu File=$STATE/dev/nvidia$i"
    done > "$GRES_CONF"
  fi
  cat > "$CONF" <<CONF
ClusterName=local
SlurmctldHost=$host
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=3600
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmUser=root
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
$gres_types
NodeName=$host CPUs=$cpus RealMemory=$mem $node_gres State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  touch "$STATE/created_conf"
  if [ ! -e /etc/munge/munge.key ]; then
    mkdir -p /etc/munge && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    chmod 400 /etc/munge/munge.key && touch "$STATE/created_munge_key"
  fi
  chown -R munge:munge /etc/munge 2>/dev/null || true
  munged --force --socket="$STATE/munge/munge.socket.2" --pid-file="$STATE/run/munged.pid" \
    --log-file="$STATE/log/munged.log" --seed-file="$STATE/munge/munged.seed" 2>/dev/null \
    || munged --force --pid-file="$STATE/run/munged.pid" --log-file="$STATE/log/munged.log"
  # Slurm's munge plugin talks to the default socket: point it there when munged made another.
  if [ -S "$STATE/munge/munge.socket.2" ] && [ ! -S /run/munge/munge.socket.2 ]; then
    mkdir -p /run/munge && ln -sf "$STATE/munge/munge.socket.2" /run/munge/munge.socket.2 && touch "$STATE/created_socket_link"
  fi
  slurmctld
  slurmd
  for _ in $(seq 60); do
    if sinfo -h -o %T 2>/dev/null | grep -qE '^idle'; then echo "slurm_local.sh: node $host idle"; return 0; fi
    sleep 1
  done
  echo "slurm_local.sh: the node did not become idle; logs in $STATE/log" >&2; sinfo >&2 || true; exit 5
}

stop() {
  for d in slurmd slurmctld munged; do
    local pid="$STATE/run/$d.pid"
    [ -s "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  sleep 2
  pkill -x slurmstepd 2>/dev/null || true
  [ -e "$STATE/created_conf" ] && rm -f "$CONF" "$GRES_CONF"
  [ -e "$STATE/created_munge_key" ] && rm -f /etc/munge/munge.key
  [ -e "$STATE/created_socket_link" ] && rm -f /run/munge/munge.socket.2
  rm -rf "$STATE"
  echo "slurm_local.sh: stopped; $STATE removed"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
