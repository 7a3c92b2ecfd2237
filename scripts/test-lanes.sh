#!/usr/bin/env bash
# scripts/test-lanes.sh TARGET…: runs each make TARGET (a lane: checks one after another) at the same time
# as the others, each lane's output in var/test-lanes/TARGET.log, printed whole when all have ended. While
# they run, each stage's time is printed as it is recorded ($STAGE_TIMES, scripts/stage.sh), so a long run
# shows progress. Exits non-zero when any lane failed, naming it.
#
# Why: after the Swift suites, `make test` ran six checks one after another (memory tests, noise check,
# browser tests, README walk, FHIR check, bench smoke: 397 s on this 2-core machine), none of which keeps
# both cores busy (servers waiting on Chromium, a process measuring its own memory, Python statistics).
# Two lanes side by side use the idle core. Each check has its own port and databases; installs into the
# shared venv are serialised by scripts/lib/venv.sh.
set -uo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"
: "${STAGE_TIMES:?STAGE_TIMES names the file scripts/stage.sh appends to}"
MAKE=${MAKE:-make}
# Each lane takes a few minutes; this bound is far above that and well inside CI's limit.
LANE_TIMEOUT=${LANE_TIMEOUT:-1800}
logs=$REPO_ROOT/var/test-lanes
mkdir -p "$logs"
touch "$STAGE_TIMES"

declare -A pids=()
# Stopped (Ctrl-C, CI cancelling the job) or ending early: the lanes stop too. Each runs under `timeout`,
# which leads a process group of its own and passes a TERM on to all of it (its servers, Chromium, psql);
# without this they would outlive the script and hold their ports and databases.
stop_lanes() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    wait 2>/dev/null
}
trap 'stop_lanes; exit 130' INT
trap 'stop_lanes; exit 143' TERM
trap stop_lanes EXIT
for lane in "$@"; do
    echo "test-lanes: $lane started (output: var/test-lanes/$lane.log)"
    timeout --kill-after=30 "$LANE_TIMEOUT" "$MAKE" --no-print-directory "$lane" >"$logs/$lane.log" 2>&1 </dev/null &
    pids[$lane]=$!
done

# Progress: stage lines as they are recorded.
shown=$(wc -l <"$STAGE_TIMES")
running=$#
declare -A status=()
while ((running > 0)); do
    sleep 5
    total=$(wc -l <"$STAGE_TIMES")
    if ((total > shown)); then
        tail -n "+$((shown + 1))" "$STAGE_TIMES" | head -n "$((total - shown))" | sed 's/^/test-lanes: done /'
        shown=$total
    fi
    running=0
    for lane in "$@"; do
        [[ -n ${status[$lane]:-} ]] && continue
        if kill -0 "${pids[$lane]}" 2>/dev/null; then
            running=$((running + 1))
        else
            wait "${pids[$lane]}"
            status[$lane]=$?
            if ((status[$lane] != 0)); then
                # Said at once (the other lane may run on for minutes); its whole output follows at the end.
                echo "test-lanes: $lane FAILED (exit ${status[$lane]}); its last lines:"
                tail -n 40 "$logs/$lane.log" | sed 's/^/    /'
            fi
        fi
    done
done

failed=()
for lane in "$@"; do
    echo
    echo "==== test-lanes: $lane (exit ${status[$lane]}) ===="
    cat "$logs/$lane.log"
    ((status[$lane] == 0)) || failed+=("$lane")
done
if ((${#failed[@]} > 0)); then
    echo "test-lanes: failed: ${failed[*]} (see above, or var/test-lanes/)" >&2
    exit 1
fi
