#!/usr/bin/env bash
# `make loadtest`: a release server on a fresh, seeded database of the durable "faults" cluster, under the
# mixed workload of `d4h-dev bench load` for LOAD_SECONDS (90 by default; with set-up about two minutes).
# Prints per-endpoint throughput and latency, the error count and the server's RSS over the run, and
# keeps the report in var/loadtest/report.md. Loopback only.
#
# Rate limits are switched off for the run: it measures capacity, and a few clients per account would
# otherwise be throttled by design (see README "Limits, timeouts and TLS").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
D4H=${D4H:?run through make loadtest}
D4H_DEV=${D4H_DEV:-$(dirname "$D4H")/d4h-dev}
PORT=18210
DB_PORT=${FAULTS_DB_PORT:-54341}
PASSWORD=${PG_SUPERUSER_PASSWORD:-d4h-dev-password}
PSQL=${PG_BIN:-/usr/lib/postgresql/15/bin}/psql
OUT=var/loadtest
DATABASE=d4h_load
DATABASE_URL="postgres://postgres:$PASSWORD@127.0.0.1:$DB_PORT/$DATABASE?sslmode=disable"
mkdir -p "$OUT"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    echo "loadtest: port $PORT is in use (a server left over from an earlier run?)" >&2
    exit 1
fi
bash scripts/pg-cluster.sh start faults "$DB_PORT"
PGPASSWORD=$PASSWORD "$PSQL" -X -q -h 127.0.0.1 -p "$DB_PORT" -U postgres -d postgres \
    -c "DROP DATABASE IF EXISTS $DATABASE WITH (FORCE)" -c "CREATE DATABASE $DATABASE"
export DATABASE_URL
"$D4H" migrate >/dev/null
echo "loadtest: seeding 2,000 synthetic people with 30 days of data …"
"$D4H_DEV" seed --people 2000 --days 30 >/dev/null

env MAIL_TRANSPORT=log LOG_LEVEL=warning HTTP_HOST=127.0.0.1 \
    RATE_LIMIT_UPLOADS_PER_MINUTE=0 RATE_LIMIT_DOWNLOADS_PER_MINUTE=0 \
    RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE=0 RATE_LIMIT_IMPORTS_PER_HOUR=0 \
    RATE_LIMIT_STATISTICS_PER_MINUTE=0 \
    "$D4H" serve --http-port "$PORT" >"$OUT/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 150); do curl -fsS "http://127.0.0.1:$PORT/health/ready" >/dev/null 2>&1 && break; sleep 0.2; done

rc=0
timeout $(( ${LOAD_SECONDS:-90} + 120 )) "$D4H_DEV" bench load --url "http://127.0.0.1:$PORT" --database-url "$DATABASE_URL" \
    --server-pid "$server" --duration "${LOAD_SECONDS:-90}" | tee "$OUT/report.md" || rc=$?
kill -0 "$server" 2>/dev/null || { echo "loadtest: FAIL — the server died (see $OUT/server.log)"; exit 1; }
if (( rc == 0 )); then echo "loadtest: PASS (0 errors)"; else echo "loadtest: FAIL (exit $rc)"; fi
exit "$rc"
