#!/usr/bin/env bash
# Project-local PostgreSQL clusters for Data4Help (used by the Makefile).
#
#   scripts/pg-cluster.sh start  NAME PORT [--fast]   initdb on first use, start, ensure role/db
#   scripts/pg-cluster.sh stop   NAME                 stop it if it is running
#   scripts/pg-cluster.sh reset  NAME PORT [--fast]   stop, delete the data dir, start afresh
#   scripts/pg-cluster.sh status NAME                 exit 0 if our cluster is running
#   scripts/pg-cluster.sh dir    NAME                 print the data directory
#
# NAME is a cluster name ("dev", "test"); PORT a loopback TCP port. --fast turns off
# durability (fsync, synchronous_commit, full_page_writes): for throw-away test data only.
#
# Where the data lives:
#   - as root: PostgreSQL refuses to run as root, so initdb/pg_ctl run as `postgres`
#     (through runuser) on a data dir it owns, under /var/tmp/d4h-<hash of the repo path>/,
#     because a checkout under /root is not reachable by `postgres`. The hash keeps two
#     checkouts (say, CI's fresh clone) apart.
#   - otherwise: <repo>/var/pg/ (gitignored), and the tools run as the current user.
# The log is <parent>/<NAME>.log. We always talk TCP on 127.0.0.1; the unix socket goes
# into <parent> (or nowhere, if that path is too long for a socket name), never into
# /var/run/postgresql.
#
# Settings come from the environment (the Makefile passes them; defaults match it):
#   PG_BIN, PG_SUPERUSER_PASSWORD, D4H_DB_ROLE, D4H_DB_PASSWORD, D4H_DB_NAME, PG_MAX_CONNECTIONS
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_SUPERUSER_PASSWORD=${PG_SUPERUSER_PASSWORD:-d4h-dev-password}
D4H_DB_ROLE=${D4H_DB_ROLE:-d4h}
D4H_DB_PASSWORD=${D4H_DB_PASSWORD:-d4h}
D4H_DB_NAME=${D4H_DB_NAME:-d4h}
# Every test suite runs its own server (a connection pool with background loops) side by side.
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-600}

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

die() { echo "pg-cluster: $*" >&2; exit 1; }
say() { echo "pg-cluster: $*"; }

usage() { sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 2 ]] || usage
ACTION=$1
NAME=$2
PORT=${3:-}
FAST=no
[[ ${4:-} == --fast ]] && FAST=yes
[[ $NAME =~ ^[a-z][a-z0-9_-]*$ ]] || die "bad cluster name '$NAME'"

if [[ $(id -u) -eq 0 ]]; then
    AS_ROOT=yes
    REPO_HASH=$(printf '%s' "$REPO_ROOT" | sha256sum | cut -c1-10)
    BASE_DIR=/var/tmp/d4h-$REPO_HASH
else
    AS_ROOT=no
    BASE_DIR=$REPO_ROOT/var/pg
fi
DATA_DIR=$BASE_DIR/$NAME
LOG_FILE=$BASE_DIR/$NAME.log

# A unix socket path must fit in sun_path (107 bytes); "<dir>/.s.PGSQL.NNNNN" adds 17.
if (( ${#BASE_DIR} <= 80 )); then SOCKET_DIR=$BASE_DIR; else SOCKET_DIR=''; fi

PSQL=$PG_BIN/psql
[[ -x $PSQL ]] || PSQL=$(command -v psql || true)

# Run a PostgreSQL server tool as the cluster's owner. `cd` first: `postgres` may not be
# allowed into the caller's working directory (e.g. /root/...).
as_owner() {
    if [[ $AS_ROOT == yes ]]; then
        (cd "$BASE_DIR" && runuser -u postgres -- "$@")
    else
        (cd "$BASE_DIR" && "$@")
    fi
}

require_server_tools() {
    [[ -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl ]] ||
        die "PostgreSQL 15 server tools are not in $PG_BIN (run 'make deps')"
    [[ -n $PSQL ]] || die "psql not found (run 'make deps')"
    if [[ $AS_ROOT == yes ]]; then
        id -u postgres >/dev/null 2>&1 ||
            die "running as root but there is no 'postgres' system user (run 'make deps')"
    fi
}

is_running() {
    [[ -f $DATA_DIR/PG_VERSION ]] || return 1
    as_owner "$PG_BIN/pg_ctl" -D "$DATA_DIR" status >/dev/null 2>&1
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

superuser_psql() {
    PGPASSWORD=$PG_SUPERUSER_PASSWORD PGCONNECT_TIMEOUT=5 \
        "$PSQL" -X -q -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"
}

make_base_dir() {
    mkdir -p "$BASE_DIR"
    if [[ $AS_ROOT == yes ]]; then
        chown postgres:postgres "$BASE_DIR"
    fi
    chmod 700 "$BASE_DIR"
}

init_cluster() {
    if [[ -e $DATA_DIR && ! -f $DATA_DIR/PG_VERSION ]]; then
        say "removing half-initialised $DATA_DIR"
        rm -rf "$DATA_DIR"
    fi
    say "initdb $NAME cluster in $DATA_DIR"
    local pwfile=$BASE_DIR/.$NAME.pwfile
    (umask 077 && printf '%s\n' "$PG_SUPERUSER_PASSWORD" >"$pwfile")
    if [[ $AS_ROOT == yes ]]; then chown postgres:postgres "$pwfile"; fi
    local rc=0
    as_owner "$PG_BIN/initdb" -D "$DATA_DIR" -U postgres --pwfile="$pwfile" \
        --auth=scram-sha-256 --encoding=UTF8 --locale=C >"$BASE_DIR/$NAME.initdb.log" 2>&1 || rc=$?
    rm -f "$pwfile"
    if (( rc != 0 )); then
        cat "$BASE_DIR/$NAME.initdb.log" >&2
        rm -rf "$DATA_DIR"
        die "initdb failed"
    fi
}

start_server() {
    local opts="-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories='$SOCKET_DIR'"
    opts+=" -c max_connections=$PG_MAX_CONNECTIONS"
    if [[ $FAST == yes ]]; then
        # Test data is thrown away: trade crash safety for speed. Never for the dev cluster.
        opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    say "starting $NAME cluster on 127.0.0.1:$PORT (log: $LOG_FILE)"
    # setsid: detach the postmaster from our terminal's process group, so a Ctrl-C aimed at
    # `make run` (which may have started it) does not also shut the database down.
    # 8>&-: the postmaster must not inherit the start lock's descriptor (below), or it would
    # hold the lock for its whole life and every later start would wait for it in vain.
    if ! as_owner setsid -w "$PG_BIN/pg_ctl" -D "$DATA_DIR" -l "$LOG_FILE" -w -t 60 -o "$opts" start \
        >/dev/null 8>&-; then
        echo "---- last lines of $LOG_FILE ----" >&2
        tail -n 30 "$LOG_FILE" >&2 || true
        die "could not start the $NAME cluster"
    fi
}

ensure_role_and_database() {
    # psql variables with :'x' quoting make the literals safe; \gexec runs the generated DDL
    # only when the role/database is missing. The ALTERs keep an existing role usable and bounded.
    superuser_psql -v role="$D4H_DB_ROLE" -v pw="$D4H_DB_PASSWORD" -v db="$D4H_DB_NAME" <<'SQL'
SELECT format('CREATE ROLE %I', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I LOGIN CREATEDB PASSWORD %L', :'role', :'pw') \gexec
-- A session of the application's role left idle inside a transaction (a stuck or stopped instance)
-- is ended by PostgreSQL, releasing its locks (issue 14). The server also sets it on its own
-- connections; this covers every other session of the role.
SELECT format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', :'role', '60s') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
SQL
}

do_start() {
    [[ $PORT =~ ^[0-9]+$ ]] || die "start needs a port"
    require_server_tools
    make_base_dir
    if is_running; then
        say "$NAME cluster already running ($DATA_DIR)"
    elif port_in_use "$PORT"; then
        # Ports are fixed, data dirs are per checkout: another checkout's cluster (e.g. the
        # developer's, while CI runs from a fresh clone) may hold the port. If it accepts our
        # superuser password it is a Data4Help cluster like ours, so use it rather than fail.
        local other
        if other=$(superuser_psql -At -c 'SHOW data_directory' 2>/dev/null); then
            say "port $PORT is served by another Data4Help cluster ($other); using it"
        else
            die "port $PORT is in use by something that is not a Data4Help cluster; free it or set another port"
        fi
    else
        [[ -f $DATA_DIR/PG_VERSION ]] || init_cluster
        start_server
    fi
    ensure_role_and_database
    say "$NAME cluster ready: postgres://$D4H_DB_ROLE:$D4H_DB_PASSWORD@127.0.0.1:$PORT/$D4H_DB_NAME"
}

do_stop() {
    if is_running; then
        say "stopping $NAME cluster ($DATA_DIR)"
        as_owner "$PG_BIN/pg_ctl" -D "$DATA_DIR" -m fast -w -t 60 stop >/dev/null
    else
        say "$NAME cluster is not running"
    fi
}

# One start at a time per port, across checkouts: `make test` runs checks side by side
# (scripts/test-lanes.sh), each starting with `test-db-start`, and two `ALTER ROLE`s of
# ensure_role_and_database at once can fail ("tuple concurrently updated"). Held until this script exits.
take_start_lock() {
    [[ $PORT =~ ^[0-9]+$ ]] || die "$ACTION needs a port"
    exec 8>"/tmp/d4h-pg-$PORT.lock"
    flock -w 300 8 || die "waited 300 s for another start of the cluster on port $PORT (/tmp/d4h-pg-$PORT.lock)"
}

case $ACTION in
    start)
        take_start_lock
        do_start
        ;;
    stop) do_stop ;;
    reset)
        take_start_lock
        do_stop
        say "deleting $DATA_DIR"
        rm -rf "$DATA_DIR" "$LOG_FILE" "$BASE_DIR/$NAME.initdb.log"
        do_start
        ;;
    status)
        if is_running; then say "$NAME cluster running ($DATA_DIR)"; else say "$NAME cluster not running ($DATA_DIR)"; exit 3; fi
        ;;
    dir) echo "$DATA_DIR" ;;
    *) usage ;;
esac
