#!/usr/bin/env bash
# API fuzz check (`make fuzz`, run by .ci/run): serve Data4Help on a fresh database and let
# schemathesis throw generated requests at every operation in the server's own
# /openapi.yaml, checking that nothing answers 5xx and that every status code, content type,
# header and body the server sends is one the contract declares. Each operation is called as a
# role its `x-roles` allows (a demo person, company or auditor), so every handler is reached.
#
# Expects the test cluster to be running (`make test-db-start`) and d4h to be built.
# Everything it leaves behind is under var/fuzz/ (server log, mails, JUnit report).
#
# Environment (the Makefile sets the first three):
#   D4H                    the d4h executable                    (.build/debug/d4h)
#   TEST_DB_PORT           test cluster port                     (54339)
#   PG_SUPERUSER_PASSWORD  its superuser password                (d4h-dev-password)
#   FUZZ_MAX_EXAMPLES      schemathesis --max-examples per operation (100)
#   FUZZ_TIMEOUT           wall-clock bound for schemathesis, seconds (300)
#   FUZZ_WORKERS           concurrent schemathesis workers       (1; see below)
#   FUZZ_SEED              fixed seed to replay a run            (random; printed by schemathesis)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

FUZZ_MAX_EXAMPLES=${FUZZ_MAX_EXAMPLES:-100}
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-300}
# One worker: CPython before 3.11.8 / 3.12.1 keeps the AST validator's recursion depth in
# state shared by threads (cpython gh-106905), and hypothesis parses lambda sources with
# `ast.parse` while describing strategies, so two workers occasionally die with
# "SystemError: AST constructor recursion depth mismatch" — a crash of the fuzzer, not a
# finding about the API. Debian 12's python3 is 3.11.2, so the bug is there on a clean machine.
FUZZ_WORKERS=${FUZZ_WORKERS:-1}
FUZZ_SEED=${FUZZ_SEED:-}

SERVED_DB=d4h_fuzz
PORT=18080

# Pinned so a new schemathesis release cannot change CI's verdict by surprise. The v4 CLI
# differs from v3 (e.g. no --hypothesis-* flags, --url instead of --base-url).
SCHEMATHESIS_SPEC=${SCHEMATHESIS_SPEC:-schemathesis==4.32.5}

# Demo accounts created by `d4h seed`, one per role: each operation is fuzzed as a role that may
# call it (scripts/lib/fuzz_auth_by_role.py reads `x-roles`).
DEMO_ACCOUNTS=(
    "user demo.user@data4help.example demo-user-password"
    "third_party demo.company@data4help.example demo-company-password"
    "auditor demo.auditor@data4help.example demo-auditor-password"
)

OUT=$REPO_ROOT/var/fuzz
TOOL=fuzz
# shellcheck source=lib/served-d4h.sh
source "$REPO_ROOT/scripts/lib/served-d4h.sh"
check_served_preconditions

# ---- schemathesis in the project venv ---------------------------------------------------------

schemathesis_ok() {
    [[ -x $VENV/bin/schemathesis ]] &&
        "$VENV/bin/python" -c 'import schemathesis, sys; sys.exit(0 if schemathesis.__version__.startswith("4.") else 1)' \
            2>/dev/null
}
if ! schemathesis_ok; then
    venv_install "$SCHEMATHESIS_SPEC"
    schemathesis_ok || die "schemathesis did not install"
fi
log "using $("$VENV/bin/schemathesis" --version)"

# ---- fresh database -------------------------------------------------------------------------

rm -rf "$OUT"
mkdir -p "$OUT/mail"

recreate_database "$SERVED_DB"

# The server's settings (README "Configuration"); migrate and seed get the same.
# A signing key of its own, so the audit checkpoint operations answer with checkpoints, not 404.
"$D4H" audit keygen "$OUT/audit-signing.key" >/dev/null
export DATABASE_URL HTTP_HOST=$HOST HTTP_PORT=$PORT PUBLIC_URL=$BASE_URL \
    MAIL_TRANSPORT=file MAIL_DIRECTORY=$OUT/mail LOG_LEVEL=info AUDIT_SIGNING_KEY_FILE=$OUT/audit-signing.key

log "d4h migrate"
"$D4H" migrate

# ---- server ---------------------------------------------------------------------------------

start_server

# ---- a session per role ------------------------------------------------------------------

log "d4h-dev seed"
"$D4H_DEV" seed >"$OUT/seed.log" 2>&1 || { cat "$OUT/seed.log" >&2; die "d4h-dev seed failed"; }

sign_in() { # email password → prints the session token
    local session
    session=$(curl -sS --max-time 10 -X POST "$BASE_URL/v1/sessions" \
        -H 'content-type: application/json' \
        -d "{\"email\":\"$1\",\"password\":\"$2\"}") || die "POST /v1/sessions failed"
    printf '%s' "$session" | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])' 2>/dev/null ||
        die "could not log in as $1; POST /v1/sessions answered: $session"
}
# Auditors must enrol a second factor before anything else (docs/accounts.md): the demo auditor's session
# enrols one, its first code computed by oathtool as an authenticator app would.
enrol_second_factor() { # token
    local started secret confirmed
    started=$(curl -sS --max-time 10 -X POST "$BASE_URL/v1/me/second-factor" -H "authorization: Bearer $1") ||
        die "POST /v1/me/second-factor failed"
    secret=$(printf '%s' "$started" | python3 -c 'import json, sys; print(json.load(sys.stdin)["secret"])' 2>/dev/null) ||
        die "could not start enrolling a second factor; the answer was: $started"
    confirmed=$(curl -sS --max-time 10 -X POST "$BASE_URL/v1/me/second-factor/confirmation" -H "authorization: Bearer $1" \
        -H 'content-type: application/json' -d "{\"code\":\"$(oathtool --totp -b "$secret")\"}") ||
        die "POST /v1/me/second-factor/confirmation failed"
    [[ $confirmed == *recoveryCodes* ]] || die "could not confirm the second factor; the answer was: $confirmed"
}
command -v oathtool >/dev/null || die "oathtool is missing: run 'make deps'"
for account in "${DEMO_ACCOUNTS[@]}"; do
    read -r role email password <<<"$account"
    token=$(sign_in "$email" "$password")
    if [[ $role == auditor ]]; then enrol_second_factor "$token"; fi
    export "D4H_FUZZ_TOKEN_${role^^}=$token"
    log "logged in as $email ($role)"
done
export SCHEMATHESIS_HOOKS=$REPO_ROOT/scripts/lib/fuzz_auth_by_role.py

# ---- schemathesis ---------------------------------------------------------------------------

checks=not_a_server_error,status_code_conformance,content_type_conformance
checks+=,response_schema_conformance,response_headers_conformance

args=(
    run "$BASE_URL/openapi.yaml"
    # Scheme/host/port of the server under test; any base path in the spec's `servers` is kept.
    --origin "$BASE_URL"
    --checks "$checks"
    --max-examples "$FUZZ_MAX_EXAMPLES"
    --workers "$FUZZ_WORKERS"
    # Logging out would revoke the token every later request relies on.
    --exclude-path-regex 'sessions/current$'
    # Hypothesis health checks judge the data generation, not the API; don't fail on them.
    --suppress-health-check all
    --request-timeout 15
    --generation-database none
    --report junit --report-junit-path "$OUT/junit.xml"
    --no-color
)
if [[ -n $FUZZ_SEED ]]; then args+=(--seed "$FUZZ_SEED"); fi

log "schemathesis (max ${FUZZ_MAX_EXAMPLES} examples per operation, ${FUZZ_TIMEOUT} s bound)"
started=$SECONDS
rc=0
# From var/: schemathesis keeps its cache (.schemathesis/, e.g. earlier crashes it re-checks)
# in the working directory, and that belongs with the other untracked files.
(cd "$REPO_ROOT/var" && timeout --kill-after=15 "$FUZZ_TIMEOUT" "$VENV/bin/schemathesis" "${args[@]}") || rc=$?
log "schemathesis took $((SECONDS - started)) s"

case $rc in
    0) log "passed" ;;
    124 | 137) die "schemathesis did not finish within ${FUZZ_TIMEOUT} s (lower FUZZ_MAX_EXAMPLES?)" ;;
    *) die "schemathesis reported failures (exit $rc)" ;;
esac
check_server_log
