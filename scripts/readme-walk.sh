#!/usr/bin/env bash
# Runs the README's "A walk through the demo", exactly as written, against a fresh seeded server: the
# walk's shell blocks are extracted from README.md, pointed at this server instead of port 8080, and run
# in order by bash with `set -e`, the way a newcomer pastes them. Part of `make test`, so the README
# cannot rot again.
#
# A block fails the walk when one of its commands fails (a `json` extraction finds no such field, a file
# is missing …). Afterwards the transcript must hold exactly one problem document, the 422 of the last
# block, which shows what an error looks like; any other problem means a step the README promises did
# not work. Everything is left in var/readme-walk/ (walk.sh, transcript.txt, server log, mails).
#
# Expects the test cluster (`make test-db-start`) and a built d4h. Environment as scripts/browser-tests.sh.
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

SERVED_DB=d4h_readme
PORT=18250
OUT=$REPO_ROOT/var/readme-walk
TOOL=readme-walk
WALK_TIMEOUT=${WALK_TIMEOUT:-300}
# shellcheck source=lib/served-d4h.sh
source "$REPO_ROOT/scripts/lib/served-d4h.sh"
check_served_preconditions
# The walk's auditor enrols a second factor and computes its codes with oathtool (`make deps`).
command -v oathtool >/dev/null || die "oathtool is missing: run 'make deps'"

rm -rf "$OUT"
# The walk runs in $OUT/walk, whose var/mail/ is the server's mail directory, as var/mail/ is under `make run`.
mkdir -p "$OUT/walk/var/mail" "$OUT/walk/docs"
# It reads docs/examples/ as a reader in the repository's root would.
cp -r docs/examples "$OUT/walk/docs/"

recreate_database "$SERVED_DB"
# GROUP_MIN_COHORT 100 with 2,000 synthetic people: the README's group request (women of 30–49) must be
# accepted every run, and `make run`'s 20,000 people take too long to seed for a test.
export DATABASE_URL HTTP_HOST=$HOST HTTP_PORT=$PORT PUBLIC_URL=$BASE_URL \
    MAIL_TRANSPORT=file MAIL_DIRECTORY=$OUT/walk/var/mail LOG_LEVEL=info GROUP_MIN_COHORT=100
"$D4H" migrate >"$OUT/migrate.log" 2>&1 || { cat "$OUT/migrate.log" >&2; die "d4h migrate failed"; }
log "d4h-dev seed --people 2000 --days 7"
"$D4H_DEV" seed --people 2000 --days 7 >"$OUT/seed.log" 2>&1 || { cat "$OUT/seed.log" >&2; die "d4h-dev seed failed"; }
start_server

# ---- the walk, as written ----------------------------------------------------------------------------

python3 - "$REPO_ROOT/README.md" "$BASE_URL" >"$OUT/walk/walk.sh" <<'PY'
import re, sys
readme, base_url = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]
start = readme.index("## A walk through the demo")
end = readme.index("\n## ", start + 1)
blocks = re.findall(r"```sh\n(.*?)```", readme[start:end], flags=re.S)
if len(blocks) < 4:
    sys.exit(f"readme-walk: only {len(blocks)} shell blocks in the walk-through")
print("set -e")
for number, block in enumerate(blocks, 1):
    print(f"echo '==== block {number}'")
    print(block.replace("http://127.0.0.1:8080", base_url))
PY

log "running the $(grep -c "^echo '==== block" "$OUT/walk/walk.sh") shell blocks of README.md's walk-through (${WALK_TIMEOUT} s bound)"
rc=0
# The walk calls `d4h` by name, as a reader who ran `make run` would with .build/debug on their PATH.
PATH="$(cd "$(dirname "$D4H")" && pwd -P):$PATH"
export PATH
(cd "$OUT/walk" && timeout --kill-after=10 "$WALK_TIMEOUT" bash walk.sh) >"$OUT/transcript.txt" 2>&1 || rc=$?
if (( rc != 0 )); then
    echo "---- last 40 lines of the transcript ----" >&2
    tail -n 40 "$OUT/transcript.txt" >&2
    echo "---- end of transcript ----" >&2
    last_block=$(grep '^==== block' "$OUT/transcript.txt" | tail -n 1)
    die "the README's walk-through stopped in ${last_block#==== } (exit $rc)"
fi

# ---- what the walk must have shown --------------------------------------------------------------------

python3 - "$OUT/transcript.txt" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
problems = re.findall(r'"type":"https://data4help\.example/problems/[^"]+"', text)
checks = [
    ("exactly one problem document (the 422 that shows what errors look like)", len(problems) == 1),
    ("the example error is a 422 naming its fields", '"status":422' in text and '"errors":[' in text),
    ("the registration was received", '"message":' in text.split("==== block 2")[0]),
    ("logging out ended the session (204, then 401)", "204\n401\n" in text),
    ("the password reset set a new password and ended the earlier session (202, 204, 401, 200)", "202\n204\n401\n200\n" in text),
    ("the company downloaded CSV", "text/csv" in text),
    ("the company downloaded a FHIR Bundle of heart rates (LOINC 8867-4)", "'code': '8867-4'" in text),
    ("the company's bulk export gave an NDJSON file of Observations", "Observation\n" in text),
    ("the demo person imported the example FHIR Bundle (a Patient and an Encounter skipped)",
     '"skipped":{"Encounter":1,"Patient":1}' in text),
    ("the auditor read the log as FHIR AuditEvent NDJSON", "AuditEvent\n" in text),
    ("the person granted part of the request", "'narrowed': True" in text),
    ("the consent receipt verified offline and through the API", "valid" in text and "\nTrue\n" in text),
    ("the group request's results are CSV", "bucket_start,type,unit,people,mean" in text),
    ("the audit log verifies", '"valid":true' in text),
]
failed = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(f"readme-walk: {'ok  ' if ok else 'FAIL'} {name}")
if problems and len(problems) != 1:
    print("readme-walk: problems in the transcript: " + ", ".join(problems), file=sys.stderr)
sys.exit(1 if failed else 0)
PY
check_server_log
log "passed"
