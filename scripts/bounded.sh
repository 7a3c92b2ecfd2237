#!/usr/bin/env bash
# scripts/bounded.sh SECONDS COMMAND…: runs COMMAND with a bound on its wall time. Past it, COMMAND and
# every process it started (its own process group) are ended, and the exit status is 124.
#
# Why: a stuck test never ends a Swift Testing run (a time limit records an issue but cannot stop the
# test), and CI's run of the whole suite once sat until its 90-minute limit with every thread idle. Bounded,
# the run ends with the StallReport lines naming the stuck step, and CI's remaining time is not spent.
set -uo pipefail
limit=$1
shift
# Its own process group, so that the test runner SwiftPM starts is ended with it.
setsid "$@" &
pid=$!
trap 'kill -TERM -- -"$pid" 2>/dev/null; wait "$pid"; exit 130' INT TERM
(
    # Its sleep ends with it: a sleep left behind would hold CI's output pipe open for the rest of the bound.
    sleep "$limit" >/dev/null 2>&1 &
    sleeper=$!
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    wait "$sleeper"
    if kill -0 "$pid" 2>/dev/null; then
        echo "bounded.sh: '$*' was still running after $limit s and was ended; a STALLED line above names a stuck test" >&2
        kill -TERM -- -"$pid" 2>/dev/null
        sleep 15
        kill -KILL -- -"$pid" 2>/dev/null
    fi
) &
watcher=$!
wait "$pid"
status=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
# Ended by the watcher (TERM or KILL): say so as timeout(1) does.
if ((status == 143 || status == 137)); then exit 124; fi
exit "$status"
