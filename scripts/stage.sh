#!/usr/bin/env bash
# scripts/stage.sh NAME COMMAND…: runs COMMAND, then appends "<seconds> s  NAME" (or "… FAILED") to
# $STAGE_TIMES, so that `make test` can say where its time went. Exits with the command's status.
set -uo pipefail
name=$1
shift
start=$(date +%s.%N)
"$@"
status=$?
seconds=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):7.1f}')" "$start" "$(date +%s.%N)")
mkdir -p "$(dirname "${STAGE_TIMES:?}")"
if ((status == 0)); then echo "$seconds s  $name" >>"$STAGE_TIMES"; else echo "$seconds s  $name (FAILED, exit $status)" >>"$STAGE_TIMES"; fi
exit "$status"
