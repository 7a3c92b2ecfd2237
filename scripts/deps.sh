#!/usr/bin/env bash
# Make sure the system packages the build and the local databases need are present.
# As root (a CI machine or a dev container) install what is missing with apt-get;
# otherwise print the exact command to run and fail.
#
#   needs: swift (the toolchain; never installed here), pkg-config, libargon2 (headers +
#   pkg-config file, for the CArgon2 system library target), zlib (for CZlib: reading an
#   iPhone's export.zip), libzstd (for CZstd: downloads sent with `Content-Encoding: zstd`),
#   libqrencode (for CQRencode: the second factor's QR code), PostgreSQL 15
#   server tools; for the tests, zbar-tools (zbarimg decodes the QR code) and librsvg2-bin (rsvg-convert
#   renders its SVG for zbarimg), and oathtool (scripts/readme-walk.sh computes second-factor codes).
#
#   `bash scripts/deps.sh ha` checks (and as root installs) only what `make run-ha` and the failover fault
#   scenarios need besides: pg_auto_failover (postgresql-15-auto-failover, pg-auto-failover-cli) and HAProxy.
#   `make test` never needs them.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
APT_PACKAGES=(libargon2-dev zlib1g-dev libzstd-dev libqrencode-dev zbar-tools librsvg2-bin oathtool postgresql pkg-config)

if [[ ${1:-} == ha ]]; then
    HA_PACKAGES=(postgresql-15-auto-failover pg-auto-failover-cli haproxy)
    ha_missing() {
        command -v pg_autoctl >/dev/null 2>&1 || return 0
        [[ -f $PG_BIN/../lib/pgautofailover.so || -f /usr/lib/postgresql/15/lib/pgautofailover.so ]] || return 0
        command -v haproxy >/dev/null 2>&1 || [[ -x /usr/sbin/haproxy ]] || return 0
        return 1
    }
    ha_missing || exit 0
    if [[ $(id -u) -ne 0 ]]; then
        cat >&2 <<EOF
deps: missing pg_auto_failover (pg_autoctl and the pgautofailover extension for PostgreSQL 15) or HAProxy,
      which make run-ha and the failover fault scenarios need. Run:

    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${HA_PACKAGES[*]}

and then try again.
EOF
        exit 1
    fi
    echo "deps: installing ${HA_PACKAGES[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "${HA_PACKAGES[@]}" </dev/null
    if ha_missing; then
        echo "deps: still missing pg_autoctl, pgautofailover.so or haproxy after apt-get install" >&2
        exit 1
    fi
    echo "deps: ok (ha)"
    exit 0
elif [[ -n ${1:-} ]]; then
    echo "deps: unknown mode '$1' (none, or ha)" >&2
    exit 2
fi

if ! command -v swift >/dev/null 2>&1; then
    cat >&2 <<'EOF'
deps: `swift` is not on PATH.
      Data4Help needs a Swift 6 toolchain; this project expects it at /opt/swift
      (add /opt/swift/usr/bin to PATH), or install one from https://www.swift.org/install/.
EOF
    exit 1
fi

missing() {
    command -v pkg-config >/dev/null 2>&1 || return 0
    pkg-config --exists libargon2 || return 0
    pkg-config --exists zlib || return 0
    pkg-config --exists libzstd || return 0
    pkg-config --exists libqrencode || return 0
    command -v zbarimg >/dev/null 2>&1 || return 0
    command -v rsvg-convert >/dev/null 2>&1 || return 0
    command -v oathtool >/dev/null 2>&1 || return 0
    [[ -x $PG_BIN/initdb ]] || return 0
    return 1
}

if ! missing; then
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    cat >&2 <<EOF
deps: missing system packages (libargon2-dev, zlib1g-dev, libzstd-dev, libqrencode-dev, zbar-tools, librsvg2-bin, oathtool,
      PostgreSQL 15 server, or pkg-config). Run:

    sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${APT_PACKAGES[*]}

and then try again.
EOF
    exit 1
fi

echo "deps: installing ${APT_PACKAGES[*]} with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update
# --no-install-recommends: we only need the binaries; keeps a CI install short.
apt-get install -y --no-install-recommends "${APT_PACKAGES[@]}" </dev/null

if missing; then
    echo "deps: still missing something after apt-get install (pkg-config libargon2, zlib, libzstd or libqrencode, zbarimg, rsvg-convert, oathtool, or $PG_BIN/initdb)" >&2
    exit 1
fi
echo "deps: ok"
