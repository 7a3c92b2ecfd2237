#!/usr/bin/env bash
# `make faults`: the fault scenarios of scripts/faults/ against a release build, on a durable (fsync on)
# project-local PostgreSQL cluster of their own ("faults", 127.0.0.1:$FAULTS_DB_PORT), which the database
# scenario stops and starts. FAULTS_ONLY=crash,database,instances,hostile,burst picks scenarios.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
D4H=${D4H:?run through make faults}
export FAULTS_CLUSTER=faults FAULTS_DB_PORT=${FAULTS_DB_PORT:-54341}
export PSQL=${PG_BIN:-/usr/lib/postgresql/15/bin}/psql
[[ -x $PSQL ]] || PSQL=$(command -v psql)
for port in 18201 18202 18203 18204 18205 18206 18207; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "faults: port $port is in use (a server left over from an earlier run?)" >&2
        exit 1
    fi
done
bash scripts/pg-cluster.sh start "$FAULTS_CLUSTER" "$FAULTS_DB_PORT"
IFS=, read -r -a scenarios <<<"${FAULTS_ONLY:-}"
exec python3 scripts/faults/run.py "$D4H" "${scenarios[@]}"
