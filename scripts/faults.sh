#!/usr/bin/env bash
# `make faults`: the fault scenarios of scripts/faults/ against a release build, on a durable (fsync on)
# project-local PostgreSQL cluster of their own ("faults", 127.0.0.1:$FAULTS_DB_PORT), which the database
# scenario stops and starts. FAULTS_ONLY=crash,database,instances,hostile,burst picks scenarios.
# The failover scenarios (FAULTS_ONLY=failover,monitor-lost,secondary-lost,read-replica,sync-wait-cut; issue 34) run on a
# pg_auto_failover formation of their own instead ("faults-ha": monitor 127.0.0.1:$FAULTS_HA_BASE_PORT, nodes on the
# next two ports; scripts/pg-ha.sh), which they kill nodes of (read-replica pauses the standby's replay) and restart;
# it is left running (`bash scripts/pg-ha.sh stop faults-ha`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
D4H=${D4H:?run through make faults}
export FAULTS_CLUSTER=faults FAULTS_DB_PORT=${FAULTS_DB_PORT:-54341}
export FAULTS_HA_FORMATION=faults-ha FAULTS_HA_BASE_PORT=${FAULTS_HA_BASE_PORT:-54371}
export PSQL=${PG_BIN:-/usr/lib/postgresql/15/bin}/psql
[[ -x $PSQL ]] || PSQL=$(command -v psql)
for port in 18201 18202 18203 18204 18205 18206 18207 18208 18209 18210 18211 18212 18213 18214 18215 18216 18217; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "faults: port $port is in use (a server left over from an earlier run?)" >&2
        exit 1
    fi
done
IFS=, read -r -a scenarios <<<"${FAULTS_ONLY:-}"
on_cluster=no on_formation=no
for scenario in "${scenarios[@]:-all}"; do
    case $scenario in
        failover | monitor-lost | secondary-lost | read-replica | sync-wait-cut) on_formation=yes ;;
        all) on_cluster=yes on_formation=yes ;;
        *) on_cluster=yes ;;
    esac
done
if [[ $on_cluster == yes ]]; then bash scripts/pg-cluster.sh start "$FAULTS_CLUSTER" "$FAULTS_DB_PORT"; fi
if [[ $on_formation == yes ]]; then bash scripts/deps.sh ha; fi
exec python3 scripts/faults/run.py "$D4H" "${scenarios[@]}"
