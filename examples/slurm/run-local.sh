#!/usr/bin/env bash
# run-local.sh brings up a one-node Slurm cluster on this machine, trains
# the default's nine networks once, estimates the importance of 100
# features as a 3-task job array with a dependent merge job, and checks
# that the merged report is the report of a single run from the model file
# and of the default run that trains its own networks, bit for bit but for
# the timings.
#
# It needs root and Debian's slurm-wlm and munge (installed when missing),
# and no systemd: munged, slurmctld and slurmd run in the background for
# the script's lifetime, with their state, logs and configuration in a
# temporary directory, and are stopped when it exits. Bring-up takes about
# a second. Run it from anywhere: bash examples/slurm/run-local.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if [ "$(id -u)" -ne 0 ]; then
	echo "run-local.sh: needs root (it starts munged, slurmctld and slurmd)" >&2
	exit 1
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
	echo "run-local.sh: a slurmctld or slurmd already runs here; stop it first" >&2
	exit 1
fi

work="$(mktemp -d /tmp/vi-slurm.XXXXXX)"
pids=()
cleanup() {
	status=$?
	if [ -n "${SLURM_CONF:-}" ]; then
		scancel --quiet --user=root 2>/dev/null || true
	fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	if [ "$status" -ne 0 ]; then
		echo "run-local.sh: failed; Slurm's logs:" >&2
		tail -n 20 "$work"/state/log/*.log "$work"/out/*.log 2>/dev/null >&2 || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "== building vi"
(cd "$repo" && go build -o "$work/vi" ./cmd/vi)
vi="$work/vi"

echo "== data (100 features) and the full models (3 repetitions of 3 folds), trained once"
"$vi" simulate --setting highdim --n 400 --seed 7 --out "$work/data.csv" >/dev/null
"$vi" train --data "$work/data.csv" --target y --seed 7 --out "$work/model.vimodel"
flags="--estimators lazy,dropout --adjust holm"

echo "== one-node Slurm"
state="$work/state"
mkdir -p "$state"/{spool,ctld,log} "$work/out"
host="$(hostname -s)"
mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge
if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
chmod 0700 /etc/munge
chmod 0400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
	munged --force --foreground >"$state/log/munged.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do [ -S /run/munge/munge.socket.2 ] && break; sleep 0.1; done
fi
cat >"$state/slurm.conf" <<EOF
ClusterName=vi-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$state/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$state/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$state/log/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	sinfo -h -o %T 2>/dev/null | grep -qx idle && break
	sleep 0.1
done
sinfo -h -o %T | grep -qx idle || { echo "run-local.sh: the node did not come up" >&2; exit 1; }

echo "== a 3-task job array and a dependent merge job"
cd "$work/out"
export VI="$vi" DATA="$work/data.csv" TARGET=y MODEL="$work/model.vimodel" OUT="$work/out" VI_FLAGS="$flags"
array=$(sbatch --parsable --array=0-2 --cpus-per-task=1 --export=ALL "$here/vi-array.sbatch")
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes --export=ALL "$here/merge.sbatch")
echo "array job $array, merge job $merge"
for _ in $(seq 1200); do
	[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] && break
	sleep 0.25
done
if [ ! -s "$work/out/vi.json" ]; then
	echo "run-local.sh: the merge wrote no report" >&2
	exit 1
fi

echo "== the same run in one process, from the model file and training its own networks"
# shellcheck disable=SC2086
"$vi" estimate --data "$work/data.csv" --target y --model "$work/model.vimodel" $flags --format json --out "$work/single.json"
# shellcheck disable=SC2086
"$vi" estimate --data "$work/data.csv" --target y --seed 7 $flags --format json --out "$work/trained.json"
strip() { sed -E 's/"seconds": *[-+0-9.eE]+/"seconds": 0/g' "$1"; }
for run in single trained; do
	if ! diff <(strip "$work/$run.json") <(strip "$work/out/vi.json") >"$work/diff.txt"; then
		echo "run-local.sh: the merged report differs from a single run ($run.json):" >&2
		head -n 20 "$work/diff.txt" >&2
		exit 1
	fi
done
echo "run-local.sh: ok: 3 shards merged equal a single run from the model file and the run that trains ($(grep -c '"feature"' "$work/single.json") results)"
