#!/usr/bin/env bash
# A highly available PostgreSQL for Data4Help on loopback: a pg_auto_failover formation of a monitor,
# a primary and a synchronous secondary (issue 34; used by `make run-ha` and the failover fault scenarios).
#
#   scripts/pg-ha.sh start   NAME BASEPORT   create on first use, start what is not running, wait for primary + secondary
#   scripts/pg-ha.sh stop    NAME            stop both nodes, then the monitor (the data stays)
#   scripts/pg-ha.sh status  NAME            print `pg_autoctl show state`; exit 0 if a primary and a secondary run
#   scripts/pg-ha.sh reset   NAME BASEPORT   stop, delete every node's data, start afresh
#   scripts/pg-ha.sh uri     NAME BASEPORT   print the application's multi-host URL (libpq form)
#   scripts/pg-ha.sh primary NAME            print the port of the node the monitor has as primary
#   scripts/pg-ha.sh dir     NAME            print the formation's directory
#
# Ports: the monitor on BASEPORT, node1 on BASEPORT+1, node2 on BASEPORT+2, all on 127.0.0.1 only.
# Data: /var/tmp/d4h-<hash of the repo path>/ha-NAME/{monitor,node1,node2} as root (PostgreSQL and pg_autoctl
# run as `postgres` through runuser, as in scripts/pg-cluster.sh), <repo>/var/pg/ha-NAME/ otherwise. Each node's
# `pg_autoctl run` (which supervises its postgres) logs to ha-NAME/<node>.log; postgres itself to <node>/log/.
# pg_autoctl's configuration, state and pid files are kept in ha-NAME/{config,share,run} (XDG_* directories), the
# unix sockets in ha-NAME itself (mode 700), so nothing lands in ~postgres, /tmp or /var/run/postgresql.
#
# Replication: node2 joins as a synchronous standby (replication quorum on, formation number_sync_standbys 0, so
# synchronous_standby_names names it while it is healthy and the primary falls back to wait_primary, writes
# continuing, when it is lost). The monitor's failover timers are shortened (see MONITOR_SETTINGS) so that a
# lost primary is promoted away from in about ten seconds instead of about a minute.
#
# Settings from the environment (the Makefile passes them; defaults match it):
#   PG_BIN, PG_SUPERUSER_PASSWORD, D4H_DB_ROLE, D4H_DB_PASSWORD, D4H_DB_NAME, PG_MAX_CONNECTIONS,
#   HA_WAIT (seconds to wait for the formation to converge; default 180)
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_SUPERUSER_PASSWORD=${PG_SUPERUSER_PASSWORD:-d4h-dev-password}
D4H_DB_ROLE=${D4H_DB_ROLE:-d4h}
D4H_DB_PASSWORD=${D4H_DB_PASSWORD:-d4h}
D4H_DB_NAME=${D4H_DB_NAME:-d4h}
PG_MAX_CONNECTIONS=${PG_MAX_CONNECTIONS:-300}
HA_WAIT=${HA_WAIT:-180}
# The monitor's autoctl_node and the nodes' pgautofailover_replicator log in with this (loopback-only
# development formations, like the superuser's).
HA_PASSWORD=${HA_PASSWORD:-$PG_SUPERUSER_PASSWORD}
PG_AUTOCTL=${PG_AUTOCTL:-$(command -v pg_autoctl || echo /usr/bin/pg_autoctl)}

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

die() { echo "pg-ha: $*" >&2; exit 1; }
say() { echo "pg-ha: $*"; }
usage() { sed -n '4,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[[ $# -ge 2 ]] || usage
ACTION=$1
NAME=$2
BASEPORT=${3:-}
[[ $NAME =~ ^[a-z][a-z0-9_-]*$ ]] || die "bad formation name '$NAME'"

if [[ $(id -u) -eq 0 ]]; then
    AS_ROOT=yes
    REPO_HASH=$(printf '%s' "$REPO_ROOT" | sha256sum | cut -c1-10)
    PARENT_DIR=/var/tmp/d4h-$REPO_HASH
else
    AS_ROOT=no
    PARENT_DIR=$REPO_ROOT/var/pg
fi
BASE_DIR=$PARENT_DIR/ha-$NAME
MONITOR_DIR=$BASE_DIR/monitor
NODES=(node1 node2)
# A unix socket path must fit in sun_path (107 bytes); "<dir>/.s.PGSQL.NNNNN" adds 17.
(( ${#BASE_DIR} <= 80 )) || die "$BASE_DIR is too long a path for PostgreSQL's unix sockets"

# The monitor's failover timers (milliseconds; defaults in brackets). A node is declared unhealthy once its
# keeper has not reported for node_considered_unhealthy_timeout AND the monitor's own health check failed
# (connect within health_check_timeout, every health_check_period, health_check_max_retries retries
# health_check_retry_delay apart): 1 + 1 × 0.5 s of checks, 3 s without a report, instead of 20 s. The
# secondary is then promoted once the old primary has had primary_demote_timeout to drain (4 s instead of
# 30 s), which must exceed the keepers' network_partition_timeout (2 s instead of 20 s: how long a primary
# that sees neither the monitor nor a standby keeps taking writes before it demotes itself) so that a primary
# cut off by a partition has stopped before the standby is promoted, never two primaries taking writes.
# startup_grace_period: how long after the monitor starts it refrains from failing over.
MONITOR_SETTINGS=(
    "pgautofailover.health_check_period = 1000"              # [5000]
    "pgautofailover.health_check_timeout = 1000"             # [5000]
    "pgautofailover.health_check_max_retries = 1"            # [2]
    "pgautofailover.health_check_retry_delay = 500"          # [2000]
    "pgautofailover.node_considered_unhealthy_timeout = 3000" # [20000]
    "pgautofailover.primary_demote_timeout = 4000"           # [30000]
    "pgautofailover.startup_grace_period = 5000"             # [10000]
)
NETWORK_PARTITION_TIMEOUT=2 # seconds [20]

PSQL=$PG_BIN/psql
[[ -x $PSQL ]] || PSQL=$(command -v psql || true)

port_of() { # monitor|node1|node2
    case $1 in
        monitor) echo "$BASEPORT" ;;
        node1) echo $((BASEPORT + 1)) ;;
        node2) echo $((BASEPORT + 2)) ;;
    esac
}
dir_of() { if [[ $1 == monitor ]]; then echo "$MONITOR_DIR"; else echo "$BASE_DIR/$1"; fi; }

# Run a tool as the formation's owner, from a directory it may enter, with pg_autoctl's files kept in BASE_DIR
# and every postgres socket in BASE_DIR (PG_REGRESS_SOCK_DIR makes pg_autoctl pass `-k`).
as_owner() {
    local env=(env "XDG_CONFIG_HOME=$BASE_DIR/config" "XDG_DATA_HOME=$BASE_DIR/share" "XDG_RUNTIME_DIR=$BASE_DIR/run"
        "PG_REGRESS_SOCK_DIR=$BASE_DIR" "PGHOST=$BASE_DIR" "PATH=$PG_BIN:$PATH" "PG_CONFIG=$PG_BIN/pg_config")
    if [[ $AS_ROOT == yes ]]; then
        (cd "$BASE_DIR" && runuser -u postgres -- "${env[@]}" "$@")
    else
        (cd "$BASE_DIR" && "${env[@]}" "$@")
    fi
}
autoctl() { as_owner "$PG_AUTOCTL" "$@"; }

# psql as the superuser over the formation's private unix socket (local connections are trusted; the socket
# directory is the owner's alone). $1 = port, $2 = database, then psql arguments.
local_psql() {
    local port=$1 db=$2
    shift 2
    as_owner env PGCONNECT_TIMEOUT=5 "$PSQL" -X -q -h "$BASE_DIR" -p "$port" -U postgres -d "$db" -v ON_ERROR_STOP=1 "$@"
}

require_tools() {
    [[ -x $PG_AUTOCTL ]] || die "pg_autoctl is not installed (run 'bash scripts/deps.sh ha')"
    [[ -f $PG_BIN/../lib/pgautofailover.so || -f /usr/lib/postgresql/15/lib/pgautofailover.so ]] ||
        die "the pgautofailover extension for PostgreSQL 15 is not installed (run 'bash scripts/deps.sh ha')"
    [[ -x $PG_BIN/pg_ctl && -n $PSQL ]] || die "PostgreSQL 15 is not in $PG_BIN (run 'make deps')"
    if [[ $AS_ROOT == yes ]]; then
        id -u postgres >/dev/null 2>&1 || die "running as root but there is no 'postgres' system user (run 'make deps')"
    fi
}

make_base_dir() {
    mkdir -p "$PARENT_DIR" "$BASE_DIR" "$BASE_DIR/config" "$BASE_DIR/share" "$BASE_DIR/run"
    if [[ $AS_ROOT == yes ]]; then
        chown postgres:postgres "$PARENT_DIR" "$BASE_DIR" "$BASE_DIR/config" "$BASE_DIR/share" "$BASE_DIR/run"
    fi
    chmod 700 "$PARENT_DIR" "$BASE_DIR" "$BASE_DIR/run"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pg_autoctl's service pid for a data directory, if it runs (its pid file's first line).
service_pid() {
    local pidfile pid
    pidfile=$BASE_DIR/run/pg_autoctl$(dir_of "$1")/pg_autoctl.pid
    [[ -f $pidfile ]] || return 1
    pid=$(head -1 "$pidfile" 2>/dev/null) || return 1
    [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}
is_running() { service_pid "$1" >/dev/null; }
is_created() { [[ -f $BASE_DIR/config/pg_autoctl$(dir_of "$1")/pg_autoctl.cfg && -f $(dir_of "$1")/PG_VERSION ]]; }

# Our settings, read after pg_autoctl's own (postgresql-auto-failover.conf): pg_autoctl sizes shared_buffers
# to a quarter of the machine's memory for each of the three instances, and listens on '*'.
write_local_settings() {
    local node=$1 dir
    dir=$(dir_of "$node")
    {
        echo "# Data4Help's settings for this node of the $NAME formation (scripts/pg-ha.sh); included last."
        echo "listen_addresses = '127.0.0.1'"
        echo "shared_buffers = '128MB'"
        echo "effective_cache_size = '1GB'"
        echo "maintenance_work_mem = '64MB'"
        echo "work_mem = '8MB'"
        echo "logging_collector = off"
        if [[ $node == monitor ]]; then
            echo "max_connections = 100"
            printf '%s\n' "${MONITOR_SETTINGS[@]}"
        else
            echo "max_connections = $PG_MAX_CONNECTIONS"
            # Replication in a pg_auto_failover group: the standby applies WAL as it comes.
            echo "wal_receiver_status_interval = '1s'"
        fi
    } | as_owner tee "$dir/d4h-ha.conf" >/dev/null
    if ! grep -q "^include_if_exists = 'd4h-ha.conf'" "$dir/postgresql.conf"; then
        echo "include_if_exists = 'd4h-ha.conf'" | as_owner tee -a "$dir/postgresql.conf" >/dev/null
    fi
    # pg_autoctl starts postgres with `-h <listen_addresses>` from its own configuration.
    autoctl config set --pgdata "$dir" postgresql.listen_addresses 127.0.0.1 >/dev/null
}

# initdb (run by pg_autoctl) trusts every TCP connection from 127.0.0.1: any local user could be the superuser.
# Ask for a password instead (scram-sha-256), as scripts/pg-cluster.sh does; unix-socket connections stay
# trusted, the socket directory being the owner's alone.
harden_hba() {
    local hba
    hba=$(dir_of "$1")/pg_hba.conf
    as_owner sed -i -E 's/^(host[[:space:]].*[[:space:]])trust([[:space:]]*(#.*)?)$/\1scram-sha-256\2/' "$hba"
}

start_service() {
    launch_service "$1"
    await_service "$1"
}

# Starts a node's service without waiting for it: after a failover the first node may be the secondary, whose
# postgres does not come up before the primary it follows, so both are launched before either is waited for.
launch_service() {
    local node=$1 dir log
    dir=$(dir_of "$node")
    log=$BASE_DIR/$node.log
    if is_running "$node"; then
        return 0
    fi
    say "starting $node (127.0.0.1:$(port_of "$node"); log: $log)"
    # setsid: the service and its postgres get a process group of their own, so a Ctrl-C aimed at `make run-ha`
    # does not reach them. 8>&-: it must not inherit the start lock's descriptor (below).
    as_owner setsid "$PG_AUTOCTL" run --pgdata "$dir" >>"$log" 2>&1 </dev/null 8>&- &
}

await_service() {
    local node=$1 log=$BASE_DIR/$1.log
    local deadline=$((SECONDS + 60))
    until is_running "$node" && [[ -S $BASE_DIR/.s.PGSQL.$(port_of "$node") ]] &&
        as_owner "$PG_BIN/pg_isready" -q -h "$BASE_DIR" -p "$(port_of "$node")" -t 2; do
        if ((SECONDS > deadline)); then
            echo "---- last lines of $log ----" >&2
            tail -n 30 "$log" >&2 || true
            die "$node did not start within 60 s"
        fi
        sleep 0.5
    done
}

stop_service() {
    local node=$1 pid
    pid=$(service_pid "$node") || return 0
    say "stopping $node"
    autoctl stop --pgdata "$(dir_of "$node")" >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 60))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS > deadline)); then
            say "$node did not stop within 60 s; stopping it immediately"
            autoctl stop --immediate --pgdata "$(dir_of "$node")" >/dev/null 2>&1 || true
            sleep 5
            kill -0 "$pid" 2>/dev/null && die "$node (pid $pid) would not stop"
            break
        fi
        sleep 0.3
    done
}

# Lines "name<TAB>port<TAB>reported state<TAB>goal state" from the monitor.
node_states() {
    local_psql "$BASEPORT" pg_auto_failover -At -F $'\t' \
        -c "SELECT nodename, nodeport, reportedstate, goalstate FROM pgautofailover.node ORDER BY nodeid" 2>/dev/null
}

# Wait until the monitor reports a primary and a secondary, each in its goal state.
wait_converged() {
    local what=$1 deadline=$((SECONDS + HA_WAIT)) states
    while :; do
        states=$(node_states || true)
        if awk -F'\t' '$3 == $4 && $3 == "primary" { p++ } $3 == $4 && $3 == "secondary" { s++ }
                       END { exit !(p == 1 && s >= 1) }' <<<"$states"; then
            return 0
        fi
        if ((SECONDS > deadline)); then
            echo "$states" >&2
            for node in monitor "${NODES[@]}"; do
                echo "---- last lines of $BASE_DIR/$node.log ----" >&2
                tail -n 15 "$BASE_DIR/$node.log" >&2 2>/dev/null || true
            done
            die "$what: no primary and secondary after $HA_WAIT s (states above)"
        fi
        sleep 1
    done
}

create_monitor() {
    local dir=$MONITOR_DIR
    if [[ -e $dir ]]; then
        say "removing half-created monitor in $dir"
        rm -rf "$dir" "$BASE_DIR/config/pg_autoctl$dir" "$BASE_DIR/share/pg_autoctl$dir"
    fi
    say "creating the monitor in $dir"
    autoctl create monitor --pgdata "$dir" --pgport "$BASEPORT" --hostname 127.0.0.1 --auth scram-sha-256 --no-ssl \
        --pgctl "$PG_BIN/pg_ctl" >>"$BASE_DIR/monitor.log" 2>&1 ||
        { tail -n 30 "$BASE_DIR/monitor.log" >&2; die "pg_autoctl create monitor failed"; }
    write_local_settings monitor
    harden_hba monitor
    start_service monitor
    local_psql "$BASEPORT" pg_auto_failover -v pw="$HA_PASSWORD" -v su="$PG_SUPERUSER_PASSWORD" <<'SQL'
ALTER USER autoctl_node PASSWORD :'pw';
ALTER USER postgres PASSWORD :'su';
SQL
}

monitor_uri() { echo "postgres://autoctl_node:$HA_PASSWORD@127.0.0.1:$BASEPORT/pg_auto_failover?sslmode=disable"; }

create_node() {
    local node=$1 dir
    dir=$(dir_of "$node")
    if [[ -e $dir ]]; then
        say "removing half-created $node in $dir"
        rm -rf "$dir" "$BASE_DIR/config/pg_autoctl$dir" "$BASE_DIR/share/pg_autoctl$dir" "$BASE_DIR/backup"
        # The monitor may know the node from the failed attempt: forget it, or the name is taken.
        local_psql "$BASEPORT" pg_auto_failover -c "SELECT pgautofailover.remove_node(nodeid, true) FROM pgautofailover.node WHERE nodename = '$node'" \
            >/dev/null 2>&1 || true
    fi
    say "creating $node in $dir (127.0.0.1:$(port_of "$node"))"
    # PGPASSWORD: a standby is made with pg_basebackup, as pgautofailover_replicator, before its configuration
    # holds the replication password.
    as_owner env PGPASSWORD="$HA_PASSWORD" "$PG_AUTOCTL" create postgres --pgdata "$dir" --pgport "$(port_of "$node")" \
        --listen 127.0.0.1 --hostname 127.0.0.1 --name "$node" --dbname "$D4H_DB_NAME" \
        --auth scram-sha-256 --no-ssl --pgctl "$PG_BIN/pg_ctl" --monitor "$(monitor_uri)" \
        --replication-quorum true --candidate-priority 50 >>"$BASE_DIR/$node.log" 2>&1 ||
        { tail -n 30 "$BASE_DIR/$node.log" >&2; die "pg_autoctl create postgres ($node) failed"; }
    autoctl config set --pgdata "$dir" replication.password "$HA_PASSWORD" >/dev/null
    autoctl config set --pgdata "$dir" timeout.network_partition_timeout "$NETWORK_PARTITION_TIMEOUT" >/dev/null
    write_local_settings "$node"
    harden_hba "$node"
}

# The application's role and database, on the primary (the secondary gets them by replication).
ensure_role_and_database() {
    local port
    port=$(primary_port) || die "no primary to create the role and database on"
    local_psql "$port" postgres -v role="$D4H_DB_ROLE" -v pw="$D4H_DB_PASSWORD" -v db="$D4H_DB_NAME" \
        -v su="$PG_SUPERUSER_PASSWORD" -v rp="$HA_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
SELECT format('ALTER ROLE %I LOGIN CREATEDB PASSWORD %L', :'role', :'pw') \gexec
-- As in scripts/pg-cluster.sh: an idle-in-transaction session of the application's role is ended (issue 14).
SELECT format('ALTER ROLE %I SET idle_in_transaction_session_timeout = %L', :'role', '60s') \gexec
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'role')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db') \gexec
-- pg_autoctl created the database (--dbname) as the superuser's: the application owns it, and so its schema.
SELECT format('ALTER DATABASE %I OWNER TO %I', :'db', :'role') \gexec
ALTER USER postgres PASSWORD :'su';
ALTER USER pgautofailover_replicator PASSWORD :'rp';
SQL
}

primary_port() {
    local port
    port=$(node_states | awk -F'\t' '$3 == "primary" || $3 == "wait_primary" || $3 == "single" { print $2; exit }')
    [[ -n $port ]] && echo "$port"
}

check_ports_free() {
    local node port
    for node in monitor "${NODES[@]}"; do
        port=$(port_of "$node")
        if ! is_running "$node" && port_in_use "$port"; then
            die "port $port ($node) is in use by something else; free it or choose another BASEPORT"
        fi
    done
}

do_start() {
    [[ $BASEPORT =~ ^[0-9]+$ ]] || die "$ACTION needs a base port"
    require_tools
    make_base_dir
    check_ports_free
    if is_created monitor; then start_service monitor; else create_monitor; fi
    if ! is_created node1; then
        create_node node1
        start_service node1
        ensure_role_and_database
        if ! is_created node2; then create_node node2; fi
        start_service node2
    elif ! is_created node2; then
        start_service node1
        create_node node2
        start_service node2
    else
        launch_service node1
        launch_service node2
        await_service node1
        await_service node2
    fi
    wait_converged "start"
    ensure_role_and_database
    say "$NAME formation ready: monitor 127.0.0.1:$BASEPORT, primary 127.0.0.1:$(primary_port)"
    say "application URL: $(app_uri)"
}

do_stop() {
    local node
    # The standby first, so that the primary does not wait on synchronous replication while it stops.
    for node in "${NODES[@]}"; do
        [[ $(primary_port 2>/dev/null || true) == $(port_of "$node") ]] && continue
        stop_service "$node"
    done
    for node in "${NODES[@]}" monitor; do stop_service "$node"; done
    say "$NAME formation stopped ($BASE_DIR)"
}

app_uri() {
    echo "postgres://$D4H_DB_ROLE:$D4H_DB_PASSWORD@127.0.0.1:$((BASEPORT + 1)),127.0.0.1:$((BASEPORT + 2))/$D4H_DB_NAME?sslmode=disable&target_session_attrs=read-write"
}

# One start at a time per formation.
take_start_lock() {
    exec 8>"/tmp/d4h-pg-ha-$NAME.lock"
    flock -w 300 8 || die "waited 300 s for another start of the $NAME formation (/tmp/d4h-pg-ha-$NAME.lock)"
}

# Commands that only know NAME find the base port in the monitor's configuration.
if [[ -z $BASEPORT && -f $BASE_DIR/config/pg_autoctl$MONITOR_DIR/pg_autoctl.cfg ]]; then
    BASEPORT=$(awk -F' = ' '$1 == "port" { print $2; exit }' "$BASE_DIR/config/pg_autoctl$MONITOR_DIR/pg_autoctl.cfg")
fi

case $ACTION in
    start)
        take_start_lock
        do_start
        ;;
    stop)
        [[ -d $BASE_DIR ]] || { say "$NAME formation does not exist ($BASE_DIR)"; exit 0; }
        do_stop
        ;;
    reset)
        take_start_lock
        [[ $BASEPORT =~ ^[0-9]+$ ]] || die "reset needs a base port"
        if [[ -d $BASE_DIR ]]; then do_stop; fi
        say "deleting $BASE_DIR"
        rm -rf "$BASE_DIR"
        do_start
        ;;
    status)
        [[ -d $BASE_DIR && -n $BASEPORT ]] || { say "$NAME formation does not exist ($BASE_DIR)"; exit 3; }
        for node in monitor "${NODES[@]}"; do
            if pid=$(service_pid "$node"); then say "$node: pg_autoctl running (pid $pid)"; else say "$node: not running"; fi
        done
        if is_running monitor; then
            autoctl show state --pgdata "$MONITOR_DIR" || exit 3
            node_states | awk -F'\t' '$3 == $4 && $3 == "primary" { p++ } $3 == $4 && $3 == "secondary" { s++ }
                                      END { exit !(p == 1 && s >= 1) }' || exit 3
        else
            exit 3
        fi
        ;;
    uri)
        [[ $BASEPORT =~ ^[0-9]+$ ]] || die "uri needs a base port"
        app_uri
        ;;
    primary)
        [[ -n $BASEPORT ]] || die "$NAME formation does not exist ($BASE_DIR)"
        primary_port || die "the monitor knows no primary"
        ;;
    dir) echo "$BASE_DIR" ;;
    *) usage ;;
esac
