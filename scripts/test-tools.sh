#!/usr/bin/env bash
# The Python tools the Swift tests run, installed into the project's venv (var/venv, scripts/lib/venv.sh):
# today aiosmtpd, the real SMTP server behind scripts/smtp-sink.py (MailTransportTests, the SMTP benchmark's
# sink). `make test` runs it first, so a fresh clone's tests find them; quick when they are already there.
#
# Environment:
#   AIOSMTPD_SPEC  aiosmtpd to install (aiosmtpd==1.4.6)
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TOOL=test-tools
# Pinned so a new release cannot change what the tests see by surprise.
AIOSMTPD_SPEC=${AIOSMTPD_SPEC:-aiosmtpd==1.4.6}
# shellcheck source=lib/venv.sh
source "$REPO_ROOT/scripts/lib/venv.sh"

command -v python3 >/dev/null || die "python3 is not installed"
if ! venv_has "$AIOSMTPD_SPEC"; then
    venv_install "$AIOSMTPD_SPEC" || die "could not install $AIOSMTPD_SPEC: run '$VENV/bin/python -m pip install $AIOSMTPD_SPEC'"
    venv_has "$AIOSMTPD_SPEC" || die "$AIOSMTPD_SPEC did not install"
fi
