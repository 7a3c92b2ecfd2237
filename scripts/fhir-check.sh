#!/usr/bin/env bash
# The FHIR R4 resources the API serves, validated from outside Swift against the FHIR R4 models of PyPI's
# `fhir.resources`, through scripts/fhir-check.py on a fresh server: the `Consent` of requests in every state
# as both sides fetch it, the auditors' `AuditEvent` NDJSON, and the Observation downloads (a `Bundle` and
# NDJSON: every sample type, an empty download, a multi-megabyte one) once the server offers them. Part of
# `make test`; the script prints how many resources of each kind it validated.
#
# fhir.resources 6.4.0 is the last release whose models are FHIR R4 (4.0.1; 6.5 moved to R4B, 7 and later to
# R5). It needs pydantic 1, so it has a venv of its own, var/fhir-venv: installing pydantic 1 into the test
# tools' shared venv (var/venv) could break a tool there that needs pydantic 2.
#
# Expects the test cluster (`make test-db-start`) and a built d4h. Environment as scripts/browser-tests.sh, and
#   FHIR_RESOURCES_SPEC  fhir.resources to install (fhir.resources==6.4.0)
#   PYDANTIC_SPEC        pydantic to install with it (pydantic==1.10.21)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

SERVED_DB=d4h_fhir
PORT=18260
OUT=$REPO_ROOT/var/fhir-check
TOOL=fhir-check
FHIR_RESOURCES_SPEC=${FHIR_RESOURCES_SPEC:-fhir.resources==6.4.0}
PYDANTIC_SPEC=${PYDANTIC_SPEC:-pydantic==1.10.21}
FHIR_VENV=$REPO_ROOT/var/fhir-venv
CHECK_TIMEOUT=${CHECK_TIMEOUT:-120}
# shellcheck source=lib/served-d4h.sh
source "$REPO_ROOT/scripts/lib/served-d4h.sh"
check_served_preconditions

# ---- the models -----------------------------------------------------------------------------

installed() {
    "$FHIR_VENV/bin/python" -c '
import sys
from importlib.metadata import version
sys.exit(0 if all(version(name) == wanted for name, wanted in (spec.split("==") for spec in sys.argv[1:])) else 1)' \
        "$FHIR_RESOURCES_SPEC" "$PYDANTIC_SPEC" 2>/dev/null
}
if ! installed; then
    # A venv of its own: pydantic 1 must not replace the pydantic 2 of var/venv's tools.
    VENV=$FHIR_VENV venv_install "$FHIR_RESOURCES_SPEC" "$PYDANTIC_SPEC" ||
        die "could not install $FHIR_RESOURCES_SPEC: run '$FHIR_VENV/bin/python -m pip install $FHIR_RESOURCES_SPEC $PYDANTIC_SPEC'"
    installed || die "$FHIR_RESOURCES_SPEC or $PYDANTIC_SPEC did not install"
fi

# ---- the server -----------------------------------------------------------------------------

rm -rf "$OUT"
mkdir -p "$OUT/mail"
recreate_database "$SERVED_DB"
export DATABASE_URL HTTP_HOST=$HOST HTTP_PORT=$PORT PUBLIC_URL=$BASE_URL MAIL_TRANSPORT=file MAIL_DIRECTORY=$OUT/mail LOG_LEVEL=info
"$D4H" migrate >"$OUT/migrate.log" 2>&1 || { cat "$OUT/migrate.log" >&2; die "d4h migrate failed"; }
# The auditor who reads the AuditEvent export: added as an operator does, activated by the script.
AUDITOR_EMAIL=fhir.auditor.$$@example.com
"$D4H" auditors add "$AUDITOR_EMAIL" >"$OUT/auditor.log" 2>&1 || { cat "$OUT/auditor.log" >&2; die "d4h auditors add failed"; }
start_server

# ---- the check ------------------------------------------------------------------------------

log "fetching the FHIR resources and validating them (${CHECK_TIMEOUT} s bound)"
rc=0
BASE_URL=$BASE_URL MAIL_DIR=$OUT/mail OUT=$OUT AUDITOR_EMAIL=$AUDITOR_EMAIL PYTHONDONTWRITEBYTECODE=1 \
    timeout --kill-after=10 "$CHECK_TIMEOUT" "$FHIR_VENV/bin/python" scripts/fhir-check.py || rc=$?
case $rc in
    0) log "passed" ;;
    124 | 137) die "the check did not finish within ${CHECK_TIMEOUT} s" ;;
    *) die "a FHIR resource did not validate, or a step failed (exit $rc); the resources are in ${OUT#"$REPO_ROOT"/}/" ;;
esac
check_server_log
