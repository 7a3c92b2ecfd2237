#!/usr/bin/env bash
# Browser tests of the web console (docs/console.md): serve Data4Help on a fresh, seeded database
# and drive the console with headless Chromium through Selenium (Tests/Browser/, Python unittest).
# The tests also refresh the screenshots in docs/screenshots/.
#
# Expects the test cluster to be running (`make test-db-start`) and d4h to be built.
# Everything it leaves behind is under var/browser/ (server log, seed log, mails, and for a failed
# test a screenshot and the HTML of each of its browser windows in failures/).
#
# Environment (the Makefile sets the first three):
#   D4H                    the d4h executable                    (.build/debug/d4h)
#   TEST_DB_PORT           test cluster port                     (54339)
#   PG_SUPERUSER_PASSWORD  its superuser password                (d4h-dev-password)
#   PG_BIN                 PostgreSQL binaries                   (/usr/lib/postgresql/15/bin)
#   BROWSER_TIMEOUT        wall-clock bound for the tests, seconds (600)
#   BROWSER_TEST_PATTERN   only run tests whose id matches (unittest -k), e.g. test_04
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

BROWSER_TIMEOUT=${BROWSER_TIMEOUT:-600}
BROWSER_TEST_PATTERN=${BROWSER_TEST_PATTERN:-}

SERVED_DB=d4h_browser
PORT=18230

# Pinned so a new Selenium release cannot change the verdict by surprise.
SELENIUM_SPEC=${SELENIUM_SPEC:-selenium==4.51.0}
CHROMIUM=/usr/bin/chromium
CHROMEDRIVER=/usr/bin/chromedriver

OUT=$REPO_ROOT/var/browser
SCREENSHOT_DIR=$REPO_ROOT/docs/screenshots
TOOL=browser
# shellcheck source=lib/served-d4h.sh
source "$REPO_ROOT/scripts/lib/served-d4h.sh"
check_served_preconditions
command -v timeout >/dev/null || die "timeout (coreutils) is not installed"

# ---- Chromium and chromedriver (Debian packages) --------------------------------------------

if [[ ! -x $CHROMIUM || ! -x $CHROMEDRIVER ]]; then
    if [[ $(id -u) -eq 0 ]]; then
        log "installing chromium and chromium-driver"
        apt_install chromium chromium-driver || die "could not install chromium and chromium-driver"
    else
        die "chromium or chromedriver is missing: run 'sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver'"
    fi
fi
[[ -x $CHROMIUM && -x $CHROMEDRIVER ]] || die "$CHROMIUM or $CHROMEDRIVER is still missing"

# ---- Selenium in the project venv (shared with scripts/api-fuzz.sh) ---------------------------

selenium_ok() {
    [[ -x $VENV/bin/python ]] &&
        "$VENV/bin/python" -c '
import sys
from importlib.metadata import version
sys.exit(0 if version("selenium") == sys.argv[1] else 1)' "${SELENIUM_SPEC#selenium==}" 2>/dev/null
}
if ! selenium_ok; then
    venv_install "$SELENIUM_SPEC"
    selenium_ok || die "$SELENIUM_SPEC did not install"
fi
log "using selenium $("$VENV/bin/python" -c 'import selenium; print(selenium.__version__)'), $("$CHROMIUM" --version 2>/dev/null | head -n 1)"

# ---- fresh database -------------------------------------------------------------------------

rm -rf "$OUT"
mkdir -p "$OUT/mail" "$SCREENSHOT_DIR"

recreate_database "$SERVED_DB"

# The server's settings (README "Configuration"); migrate and seed get the same.
export DATABASE_URL HTTP_HOST=$HOST HTTP_PORT=$PORT PUBLIC_URL=$BASE_URL \
    MAIL_TRANSPORT=file MAIL_DIRECTORY=$OUT/mail LOG_LEVEL=info GROUP_MIN_COHORT=100

log "d4h migrate"
"$D4H" migrate >"$OUT/migrate.log" 2>&1 || { cat "$OUT/migrate.log" >&2; die "d4h migrate failed"; }

# Demo accounts plus 300 synthetic people with a week of data ending yesterday: enough for a group
# request above GROUP_MIN_COHORT. The threshold is 100, not a handful: it gates a noisy count (noise of
# standard deviation 7 at the default ρ), so an empty cohort must stay far below it for the refused
# request to be refused every run.
log "d4h-dev seed --people 300 --days 7"
"$D4H_DEV" seed --people 300 --days 7 >"$OUT/seed.log" 2>&1 || { cat "$OUT/seed.log" >&2; die "d4h-dev seed failed"; }

# ---- server ---------------------------------------------------------------------------------

start_server

# ---- the tests ------------------------------------------------------------------------------

args=(-m unittest discover -s Tests/Browser -t Tests/Browser -v)
if [[ -n $BROWSER_TEST_PATTERN ]]; then args+=(-k "$BROWSER_TEST_PATTERN"); fi

log "running Tests/Browser (${BROWSER_TIMEOUT} s bound)"
started=$SECONDS
rc=0
BASE_URL=$BASE_URL MAIL_DIR=$OUT/mail SCREENSHOT_DIR=$SCREENSHOT_DIR FAILURE_DIR=$OUT/failures \
    CHROMIUM=$CHROMIUM CHROMEDRIVER=$CHROMEDRIVER PYTHONDONTWRITEBYTECODE=1 \
    timeout --kill-after=15 "$BROWSER_TIMEOUT" "$VENV/bin/python" "${args[@]}" || rc=$?
log "the tests took $((SECONDS - started)) s"

# A server that died half-way makes every later test fail with "connection refused": say so plainly.
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    wait "$SERVER_PID" && status=0 || status=$?
    SERVER_PID=
    die "d4h serve died during the tests (exit status $status$( ((status > 128)) && echo ", signal $((status - 128))"))"
fi

case $rc in
    0) log "passed" ;;
    124 | 137) die "the browser tests did not finish within ${BROWSER_TIMEOUT} s" ;;
    *) die "browser tests failed (exit $rc)" ;;
esac
check_server_log
