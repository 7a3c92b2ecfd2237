# Shared by scripts/api-fuzz.sh and scripts/browser-tests.sh: a `d4h serve` on a fresh database of the
# test cluster, stopped whatever happens, and the project's Python venv (var/venv, scripts/lib/venv.sh) for
# the test tools.
#
# The including script sets, before sourcing: TOOL (the log prefix), REPO_ROOT, PORT (where its server
# listens), SERVED_DB (the database it recreates) and OUT (its output directory). Sourcing sets the
# settings both share (below) and installs an EXIT trap that stops the server and, on failure, prints
# the server log's tail.

# Environment, with the Makefile's values as defaults: D4H (the executable), TEST_DB_PORT,
# PG_SUPERUSER_PASSWORD and PG_BIN (the test cluster).
D4H=${D4H:-$REPO_ROOT/.build/debug/d4h}
D4H_DEV=${D4H_DEV:-$(dirname "$D4H")/d4h-dev}
PG_PORT=${TEST_DB_PORT:-54339}
PG_SUPERUSER_PASSWORD=${PG_SUPERUSER_PASSWORD:-d4h-dev-password}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
HOST=127.0.0.1
BASE_URL=http://$HOST:$PORT
DATABASE_URL="postgres://d4h:d4h@127.0.0.1:$PG_PORT/$SERVED_DB?sslmode=disable"
SERVER_LOG=$OUT/server.log
# log, die, apt_install, venv_install and VENV (var/venv, one venv for every test tool).
# shellcheck source=venv.sh
source "$REPO_ROOT/scripts/lib/venv.sh"

SERVER_PID=

show_server_log() {
    if [[ -s $SERVER_LOG ]]; then
        echo "---- last 60 lines of $SERVER_LOG ----" >&2
        tail -n 60 "$SERVER_LOG" >&2
        echo "---- end of server log ----" >&2
    fi
}

stop_server_on_exit() {
    local rc=$?
    if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        # Give it a moment to shut down gracefully, then insist.
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if (( rc != 0 )); then
        show_server_log
        echo "$TOOL: FAILED (exit $rc); the server log and mails are in ${OUT#"$REPO_ROOT"/}/" >&2
    fi
    exit "$rc"
}
trap stop_server_on_exit EXIT
trap 'exit 130' INT TERM

# The preconditions every served run has: the binary, curl, psql, and a free port.
check_served_preconditions() {
    [[ -x $D4H ]] || die "$D4H is not built (run 'make build')"
    command -v curl >/dev/null || die "curl is not installed"
    command -v python3 >/dev/null || die "python3 is not installed"
    PSQL=${PG_BIN:-/usr/lib/postgresql/15/bin}/psql
    [[ -x $PSQL ]] || PSQL=$(command -v psql) || die "psql is not installed (run 'make deps')"
    if (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; then
        die "port $PORT is already in use (a server left over from an earlier run?)"
    fi
}

# Drops and creates database NAME on the test cluster, owned by the application's role.
recreate_database() {
    log "recreating database $1 on 127.0.0.1:$PG_PORT"
    PGPASSWORD=$PG_SUPERUSER_PASSWORD "$PSQL" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres \
        -v ON_ERROR_STOP=1 <<SQL
DROP DATABASE IF EXISTS $1 WITH (FORCE);
CREATE DATABASE $1 OWNER d4h;
SQL
}

# Starts `d4h serve` (environment already exported) and waits up to 60 s for /health/ready. The server
# signs consent receipts, as `make run`'s does, with a key made in $OUT unless the caller gave one.
start_server() {
    if [[ -z ${CONSENT_SIGNING_KEY_FILE:-} ]]; then
        CONSENT_SIGNING_KEY_FILE=$OUT/consent-signing.key
        [[ -f $CONSENT_SIGNING_KEY_FILE ]] || "$D4H" consent keygen "$CONSENT_SIGNING_KEY_FILE" >/dev/null
        export CONSENT_SIGNING_KEY_FILE
    fi
    log "starting d4h serve on $BASE_URL (log: ${SERVER_LOG#"$REPO_ROOT"/})"
    "$D4H" serve >"$SERVER_LOG" 2>&1 </dev/null &
    SERVER_PID=$!
    local rc
    for _ in $(seq 1 120); do   # 120 × 0.5 s = 60 s
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            wait "$SERVER_PID" && rc=0 || rc=$?
            SERVER_PID=
            die "d4h serve exited (status $rc) before it was ready"
        fi
        if curl -fsS --max-time 2 -o /dev/null "$BASE_URL/health/ready" 2>/dev/null; then
            log "server is ready"
            return 0
        fi
        sleep 0.5
    done
    die "server not ready after 60 s (GET $BASE_URL/health/ready)"
}

# Fails (naming the lines) if the server logged a line at error level or above, or a warning matching none of
# the extended regular expressions given: an error in the log is a bug even when every check passed (issue 27:
# partition maintenance failed at every start for months and no suite read the log). Call it after the
# tests, while or after the server runs.
check_server_log() {
    local allowed=('audit checkpoints are off') pattern bad
    allowed+=("$@")
    # swift-log's stream handler writes "<timestamp> <level> <label> : …".
    bad=$(grep -E '^[^ ]+ (warning|error|critical) ' "$SERVER_LOG" || true)
    for pattern in "${allowed[@]}"; do
        bad=$(grep -vE "^[^ ]+ warning .*($pattern)" <<<"$bad" || true)
    done
    if [[ -n $bad ]]; then
        echo "$TOOL: the server logged $(wc -l <<<"$bad") line(s) at warning or above that this run does not expect:" >&2
        head -n 20 <<<"$bad" | cut -c1-400 >&2
        die "unexpected warnings or errors in ${SERVER_LOG#"$REPO_ROOT"/}"
    fi
    log "server log: no unexpected warning or error"
}
