#!/usr/bin/env bash
# The noise samplers (Sources/BrokerDomain/Privacy/Noise) checked from outside Swift: draws of the discrete Gaussian
# (`d4h-dev privacy noise`) against scipy's statistics on the exact pmf and against OpenDP's own sampler, and draws of
# the exponential mechanism (`d4h-dev privacy exponential`) and of the percentiles' `QuantileMechanism`
# (`d4h-dev privacy quantile`) against their exact pmfs computed in Python (scripts/privacy-noise-check.py says how).
# Needs no database or server; under a minute on a debug build.
#
# scipy and opendp are installed from PyPI into the project venv, var/venv, the one the browser tests and the
# fuzzer use (scripts/lib/served-d4h.sh): a tool is added to it, never by recreating it. That file's venv_install
# comes with a server's set-up and exit trap, so the few lines needed here are repeated below instead.
#
# Environment (the Makefile sets the first):
#   D4H_DEV       the d4h-dev executable                       (.build/debug/d4h-dev)
#   SCIPY_SPEC    scipy to install                             (scipy==1.17.1)
#   OPENDP_SPEC   opendp to install; if it cannot be installed, the comparison with OpenDP is skipped (opendp==0.16.0)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

D4H_DEV=${D4H_DEV:-$REPO_ROOT/.build/debug/d4h-dev}
VENV=$REPO_ROOT/var/venv
# Pinned so a new release cannot change the verdict by surprise.
SCIPY_SPEC=${SCIPY_SPEC:-scipy==1.17.1}
OPENDP_SPEC=${OPENDP_SPEC:-opendp==0.16.0}

log() { echo "privacy-noise-check: $*"; }
die() { echo "privacy-noise-check: $*" >&2; exit 1; }

[[ -x $D4H_DEV ]] || die "$D4H_DEV is not built (run 'make build')"
command -v python3 >/dev/null || die "python3 is not installed"

# ---- the venv -------------------------------------------------------------------------------

if [[ ! -x $VENV/bin/python ]]; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
        if [[ $(id -u) -eq 0 ]]; then
            log "installing python3-venv"
            DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv </dev/null >/dev/null ||
                { apt-get update >/dev/null &&
                    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv </dev/null >/dev/null; } ||
                die "could not install python3-venv"
        else
            die "python3 cannot create a venv: run 'sudo apt-get install -y python3-venv'"
        fi
    fi
    log "creating ${VENV#"$REPO_ROOT"/}"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
fi

# True when the venv holds exactly this version of the distribution (SPEC is name==version).
installed() {
    "$VENV/bin/python" -c '
import sys
from importlib.metadata import version
name, wanted = sys.argv[1].split("==")
sys.exit(0 if version(name) == wanted else 1)' "$1" 2>/dev/null
}
pip_install() {
    log "installing $1 into ${VENV#"$REPO_ROOT"/}"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$1"
}

if ! installed "$SCIPY_SPEC"; then
    pip_install "$SCIPY_SPEC" || die "could not install $SCIPY_SPEC: run '$VENV/bin/python -m pip install $SCIPY_SPEC'"
fi
# OpenDP is a second opinion, not the verdict: without it the checks against the exact pmf still run.
if ! installed "$OPENDP_SPEC"; then
    pip_install "$OPENDP_SPEC" || log "could not install $OPENDP_SPEC; the comparison with OpenDP will be skipped"
fi

# ---- the check ------------------------------------------------------------------------------

D4H_DEV=$D4H_DEV PYTHONDONTWRITEBYTECODE=1 "$VENV/bin/python" scripts/privacy-noise-check.py
