#!/usr/bin/env bash
# The noise samplers (Sources/BrokerDomain/Privacy/Noise) checked from outside Swift: draws of the discrete Gaussian
# (`d4h-dev privacy noise`) against scipy's statistics on the exact pmf and against OpenDP's own sampler, and draws of
# the exponential mechanism (`d4h-dev privacy exponential`) and of the percentiles' `QuantileMechanism`
# (`d4h-dev privacy quantile`) against their exact pmfs computed in Python (scripts/privacy-noise-check.py says how).
# Needs no database or server; under a minute on a debug build.
#
# scipy and opendp are installed from PyPI into the project venv, var/venv (scripts/lib/venv.sh), the one the
# browser tests and the fuzzer use: a tool is added to it, never by recreating it.
#
# Environment (the Makefile sets the first):
#   D4H_DEV       the d4h-dev executable                       (.build/debug/d4h-dev)
#   SCIPY_SPEC    scipy to install                             (scipy==1.17.1)
#   OPENDP_SPEC   opendp to install; if it cannot be installed, the comparison with OpenDP is skipped (opendp==0.16.0)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO_ROOT"

D4H_DEV=${D4H_DEV:-$REPO_ROOT/.build/debug/d4h-dev}
# Pinned so a new release cannot change the verdict by surprise.
SCIPY_SPEC=${SCIPY_SPEC:-scipy==1.17.1}
OPENDP_SPEC=${OPENDP_SPEC:-opendp==0.16.0}

TOOL=privacy-noise-check
source "$REPO_ROOT/scripts/lib/venv.sh"

[[ -x $D4H_DEV ]] || die "$D4H_DEV is not built (run 'make build')"
command -v python3 >/dev/null || die "python3 is not installed"

if ! venv_has "$SCIPY_SPEC"; then
    venv_install "$SCIPY_SPEC" || die "could not install $SCIPY_SPEC: run '$VENV/bin/python -m pip install $SCIPY_SPEC'"
fi
# OpenDP is a second opinion, not the verdict: without it the checks against the exact pmf still run.
if ! venv_has "$OPENDP_SPEC"; then
    venv_install "$OPENDP_SPEC" || log "could not install $OPENDP_SPEC; the comparison with OpenDP will be skipped"
fi

# ---- the check ------------------------------------------------------------------------------

D4H_DEV=$D4H_DEV PYTHONDONTWRITEBYTECODE=1 "$VENV/bin/python" scripts/privacy-noise-check.py
