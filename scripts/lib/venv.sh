# The project's Python venv for the test tools (var/venv) and its one installer, venv_install. Sourced by
# scripts/lib/served-d4h.sh (the scripts that run a server) and scripts/test-tools.sh (the Swift tests'
# tools), which need nothing else of each other.
#
# The including script sets, before sourcing: TOOL (the log prefix) and REPO_ROOT. Sourcing sets VENV
# and defines log, die, apt_install, venv_install and venv_has.

# One venv holds every test tool (see venv_install).
VENV=$REPO_ROOT/var/venv

log() { echo "$TOOL: $*"; }
die() { echo "$TOOL: $*" >&2; exit 1; }

# Debian packages, running `apt-get update` only when the install fails without it.
# Another check of `make test` may be installing at the same moment: wait for dpkg's lock (bounded).
apt_install() {
    local wait=(-o DPkg::Lock::Timeout=600)
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y --no-install-recommends "$@" </dev/null >/dev/null ||
        { apt-get "${wait[@]}" update >/dev/null &&
            DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y --no-install-recommends "$@" </dev/null >/dev/null; }
}

# `pip install SPEC…` into $VENV (var/venv), creating the venv (and installing python3-venv as root) when
# needed. One venv holds every test tool; a tool is added to it, never by recreating it. A tool whose
# dependencies clash with the others' gets a venv of its own: `VENV=… venv_install SPEC…`.
#
# `make test` runs several checks at once (scripts/test-lanes.sh), and two pips writing one venv, or two
# scripts creating it, would break it: each install holds $VENV.lock (flock) for its whole length.
venv_install() {
    mkdir -p "$(dirname "$VENV")"
    (
        flock -w 900 9 || die "waited 900 s for another install into ${VENV#"$REPO_ROOT"/} ($VENV.lock)"
        venv_install_locked "$@"
    ) 9>"$VENV.lock"
}

venv_install_locked() {
    if [[ ! -x $VENV/bin/python ]]; then
        if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
            if [[ $(id -u) -eq 0 ]]; then
                log "installing python3-venv"
                apt_install python3-venv || die "could not install python3-venv"
            else
                die "python3 cannot create a venv: run 'sudo apt-get install -y python3-venv'"
            fi
        fi
        log "creating ${VENV#"$REPO_ROOT"/}"
        rm -rf "$VENV"
        python3 -m venv "$VENV"
    fi
    log "installing $* into ${VENV#"$REPO_ROOT"/}"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
}

# True when $VENV holds exactly these versions (each SPEC is name==version).
venv_has() {
    "$VENV/bin/python" -c '
import sys
from importlib.metadata import version
sys.exit(0 if all(version(name) == wanted for name, wanted in (spec.split("==") for spec in sys.argv[1:])) else 1)' \
        "$@" 2>/dev/null
}
