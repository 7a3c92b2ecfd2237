# Data4Help — developer entry points. `make help` lists the targets.
#
#   make run    build, start a local PostgreSQL, migrate, seed the demo accounts and a synthetic population, serve on :8080
#   make test   start the throw-away test PostgreSQL and run `swift test` against it
#
# Both databases are project-local clusters on fixed loopback ports (see scripts/pg-cluster.sh
# for where their data lives), so nothing here touches a system-wide PostgreSQL.

# ---- settings ---------------------------------------------------------------------------

# Loopback-only development clusters, so a fixed, well-known superuser password is fine.
PG_SUPERUSER_PASSWORD := d4h-dev-password
PG_BIN                ?= /usr/lib/postgresql/15/bin

DEV_DB_PORT  ?= 54329
TEST_DB_PORT ?= 54339

# The application's own role and database (created in both clusters).
D4H_DB_ROLE     := d4h
D4H_DB_PASSWORD := d4h
D4H_DB_NAME     := d4h

# Swift build configuration: `make build CONFIG=release`.
CONFIG ?= debug
SWIFT_FLAGS := -c $(CONFIG)

# The toolchain lives in /opt/swift; a shell that did not read /etc/profile.d may lack it.
ifneq ($(wildcard /opt/swift/usr/bin/swift),)
ifeq ($(shell command -v swift 2>/dev/null),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif
endif
SWIFT ?= swift

# The executable. `.build/<config>` is SwiftPM's symlink to the triple-specific directory.
D4H := $(CURDIR)/.build/$(CONFIG)/d4h
# The developers' executable (benchmarks, demo seeds, the noise check's draws); never shipped.
D4H_DEV := $(CURDIR)/.build/$(CONFIG)/d4h-dev

# `make run` serves here.
HTTP_HOST  := 127.0.0.1
HTTP_PORT  := 8080
PUBLIC_URL := http://$(HTTP_HOST):$(HTTP_PORT)
MAIL_DIR   := $(CURDIR)/var/mail
# The dev server's audit signing key (`d4h audit keygen` makes it on first `make run`); outside the database.
AUDIT_KEY  := $(CURDIR)/var/audit-signing.key
# The dev server's consent receipt signing key (`d4h consent keygen` makes it on first `make run`).
CONSENT_KEY := $(CURDIR)/var/consent-signing.key

DEV_DATABASE_URL  := postgres://$(D4H_DB_ROLE):$(D4H_DB_PASSWORD)@127.0.0.1:$(DEV_DB_PORT)/$(D4H_DB_NAME)?sslmode=disable
# The tests connect as the superuser: they create a migrated template database and one
# fresh database per suite themselves.
TEST_DATABASE_URL := postgres://postgres:$(PG_SUPERUSER_PASSWORD)@127.0.0.1:$(TEST_DB_PORT)/postgres?sslmode=disable

# `make test TEST_FILTER=Accounts` runs only the matching tests.
TEST_FILTER ?=

# Environment of `make run` (single quotes: the URL holds `?`).
RUN_ENV := DATABASE_URL='$(DEV_DATABASE_URL)' HTTP_HOST=$(HTTP_HOST) HTTP_PORT=$(HTTP_PORT) \
           PUBLIC_URL=$(PUBLIC_URL) MAIL_TRANSPORT=file MAIL_DIRECTORY='$(MAIL_DIR)' LOG_LEVEL=info \
           AUDIT_SIGNING_KEY_FILE='$(AUDIT_KEY)' CONSENT_SIGNING_KEY_FILE='$(CONSENT_KEY)'

# `make run-ha` (issue 34): a pg_auto_failover formation beside the dev cluster — its monitor on HA_BASE_PORT,
# node1 and node2 on the next two ports — two instances on HA_INSTANCE_PORTS and HAProxy on HTTP_PORT in front.
HA_BASE_PORT      ?= 54361
HA_INSTANCE_PORTS ?= 8081 8082
# libpq's multi-host form: the instances connect to whichever node takes writes. (HA_ENV is expanded only by
# run-ha: no other target runs pg-ha.sh.)
HA_DATABASE_URL   ?= $(shell bash $(CURDIR)/scripts/pg-ha.sh uri ha $(HA_BASE_PORT))
HA_ENV = DATABASE_URL='$(HA_DATABASE_URL)' HTTP_HOST=$(HTTP_HOST) HTTP_PORT=$(HTTP_PORT) \
          PUBLIC_URL=$(PUBLIC_URL) MAIL_TRANSPORT=file MAIL_DIRECTORY='$(MAIL_DIR)' LOG_LEVEL=info \
          AUDIT_SIGNING_KEY_FILE='$(AUDIT_KEY)' CONSENT_SIGNING_KEY_FILE='$(CONSENT_KEY)'
PG_HA := bash $(CURDIR)/scripts/pg-ha.sh

# What the helper scripts read.
export PG_BIN PG_SUPERUSER_PASSWORD D4H_DB_ROLE D4H_DB_PASSWORD D4H_DB_NAME
PG_CLUSTER := bash $(CURDIR)/scripts/pg-cluster.sh

comma := ,
space := $(subst ,, )

# ---- targets ----------------------------------------------------------------------------

.DEFAULT_GOAL := help
# Prerequisites run in order (deps before build before db); swift parallelises itself.
.NOTPARALLEL:
.PHONY: help deps build run test test-lane-measured test-lane-served test-tools privacy-noise-check browser-test readme-walk fhir-check fhir-consent-check bench loadtest faults format lint openapi fuzz psql \
        db-start db-stop db-reset test-db-start test-db-stop test-db-reset run-ha ha-start ha-stop ha-status

help: ## list the targets
	@echo "usage: make TARGET [CONFIG=debug|release] [TEST_FILTER=regex]"
	@echo
	@awk 'BEGIN { FS = ":.*## " } /^[a-zA-Z0-9_-]+:.*## / { printf "  %-14s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

deps: ## check/install system packages (swift, pkg-config, libargon2-dev, libqrencode-dev, zbar-tools, PostgreSQL 15)
	@bash scripts/deps.sh

build: deps ## swift build (CONFIG=release for -c release)
	$(SWIFT) build $(SWIFT_FLAGS)

db-start: ## start the dev PostgreSQL on 127.0.0.1:54329 (database d4h), creating it on first use
	@$(PG_CLUSTER) start dev $(DEV_DB_PORT)

db-stop: ## stop the dev PostgreSQL
	@$(PG_CLUSTER) stop dev

db-reset: ## stop the dev PostgreSQL, delete its data, start it empty
	@$(PG_CLUSTER) reset dev $(DEV_DB_PORT)

# The test cluster runs with fsync off: its data is disposable (never do this for dev).
test-db-start: ## start the test PostgreSQL on 127.0.0.1:54339 (no fsync; disposable)
	@$(PG_CLUSTER) start test $(TEST_DB_PORT) --fast

test-db-stop: ## stop the test PostgreSQL
	@$(PG_CLUSTER) stop test

test-db-reset: ## stop the test PostgreSQL, delete its data, start it empty
	@$(PG_CLUSTER) reset test $(TEST_DB_PORT) --fast

psql: db-start ## open psql on the dev database as d4h
	PGPASSWORD='$(D4H_DB_PASSWORD)' psql -h 127.0.0.1 -p $(DEV_DB_PORT) -U $(D4H_DB_ROLE) -d $(D4H_DB_NAME)

# `exec`: the server gets Ctrl-C itself; the database keeps running (`make db-stop`).
run: deps build db-start ## migrate, seed demo accounts + a synthetic population, serve on http://127.0.0.1:8080
	@mkdir -p '$(MAIL_DIR)'
	@test -f '$(AUDIT_KEY)' || '$(D4H)' audit keygen '$(AUDIT_KEY)'
	@test -f '$(CONSENT_KEY)' || '$(D4H)' consent keygen '$(CONSENT_KEY)'
	$(RUN_ENV) '$(D4H)' migrate
	@# 20,000 people put about 1,400 in each sex and ten-year age band: enough for peer statistics and
	@# group requests at the default k = 1000. 35 days reach into the last closed month whatever the date,
	@# so the peers' monthly line has data. Seeded once (a few minutes); later runs skip it.
	$(RUN_ENV) '$(D4H_DEV)' seed --people 20000 --days 35
	@echo
	@echo "Data4Help is at $(PUBLIC_URL) — open it in a browser for the web console (demo accounts above);"
	@echo "the API is under $(PUBLIC_URL)/v1 (openapi.yaml at $(PUBLIC_URL)/openapi.yaml); activation mails go to $(MAIL_DIR)"
	@echo
	@exec env $(RUN_ENV) '$(D4H)' serve

# The same demo, highly available: the database is a pg_auto_failover formation (a monitor, a primary and a
# synchronous secondary on 127.0.0.1:$(HA_BASE_PORT)+0..2), two instances serve on HA_INSTANCE_PORTS, HAProxy on
# :8080 in front of them. Ctrl-C stops the instances and HAProxy; the formation keeps running (`make ha-stop`).
run-ha: deps build ha-start ## like run, on a failover-capable PostgreSQL (pg_auto_failover), two instances behind HAProxy on :8080
	@mkdir -p '$(MAIL_DIR)'
	@test -f '$(AUDIT_KEY)' || '$(D4H)' audit keygen '$(AUDIT_KEY)'
	@test -f '$(CONSENT_KEY)' || '$(D4H)' consent keygen '$(CONSENT_KEY)'
	$(HA_ENV) '$(D4H)' migrate
	$(HA_ENV) '$(D4H_DEV)' seed --people 20000 --days 35
	@echo
	@echo "Data4Help is at $(PUBLIC_URL) (HAProxy in front of 127.0.0.1:$(subst $(space),$(comma) 127.0.0.1:,$(HA_INSTANCE_PORTS)));"
	@echo "the database is the pg_auto_failover formation 'ha' (make ha-status shows its state); activation mails go to $(MAIL_DIR)"
	@echo
	@exec env $(HA_ENV) D4H='$(D4H)' HA_INSTANCE_PORTS='$(HA_INSTANCE_PORTS)' bash scripts/run-ha.sh

ha-start: ## start run-ha's pg_auto_failover formation (monitor 127.0.0.1:54361, nodes :54362 and :54363), creating it on first use
	@bash scripts/deps.sh ha
	@$(PG_HA) start ha $(HA_BASE_PORT)

ha-stop: ## stop run-ha's formation (both nodes, then the monitor)
	@$(PG_HA) stop ha

ha-status: ## run-ha's formation: which node is primary, which secondary (pg_autoctl show state)
	@$(PG_HA) status ha

# The tests that measure peak memory of a long run (a 200 MB import, a 2-million-line AutomatedSOS replay)
# run after the parallel suite, in a process of their own (in the first of the two lanes beside the browser
# tests): each keeps a core busy for a minute, which would starve the parallel suite on a 2-core machine,
# and other tests in the same process would blur the memory they measure.
MEMORY_TESTS := largeImport|aLongTraceInConstantMemory

# The suites that drive the server through Foundation's URLSession (the generated client) run in a process
# of their own. Twice, on a fresh clone, the parallel suite stopped for good near its end with every thread
# idle and URLSession's socket thread still holding a connection to a server that had gone; the cause is
# not proven, and keeping libcurl's socket manager out of the process that runs 600 tests at once has
# not stalled since. (URLSession on Linux is the one part here not built on NIO.)
URLSESSION_TESTS := BrokerTests\.ClientTests|BrokerTests\.MonitoredUploaderServerTests

# How many tests run at once. Swift Testing's default is all of them: some 600 tests, each with its own
# database and server, started together on two cores. Every test then takes a minute, waits meant to be
# bounded in seconds (pool leases, the database watchdog's probes) time out, PostgreSQL answers "too many
# clients", and tests fail on 503s that are load on the test machine, not behaviour. Eight at a time keeps
# both cores busy (the whole suite took 168 s instead of 195 s) and stays far below max_connections.
TEST_PARALLELISM ?= 8
# The test bundle `swift build --build-tests` makes (what `swift test` runs).
TEST_BUNDLE := $(CURDIR)/.build/debug/Data4HelpPackageTests.xctest
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH := $(TEST_PARALLELISM)
# Each test holds a score of descriptors (its server, pool, clients); a shell's soft limit of 1,024 is
# not much above eight tests' worth once URLSession and child processes join. Raised to the hard limit.
# Each stage of `make test` is timed (`scripts/stage.sh`), and the times are printed at the end, so that CI's
# log says where its minutes went.
STAGE_TIMES := $(CURDIR)/var/test-stage-times.txt
STAGE := STAGE_TIMES='$(STAGE_TIMES)' bash $(CURDIR)/scripts/stage.sh
RAISE_FD_LIMIT := ulimit -n "$$(ulimit -Hn)" 2>/dev/null || true;
# A stuck test never ends a Swift Testing run, and CI's whole run once waited for one until its limit: each
# `swift test` of `make test` is bounded (scripts/bounded.sh), several times its usual length on two cores
# (the parallel suite takes 6 to 8 minutes there).
SUITE_TIME_LIMIT ?= 1800
BOUNDED := bash $(CURDIR)/scripts/bounded.sh $(SUITE_TIME_LIMIT)

# With TEST_FILTER only the matching swift tests run; without it, the memory tests, the noise cross-check, the
# browser tests, the README's walk-through and the FHIR Consent check follow,
# then every benchmark once at a tiny size (bench-smoke), so CI notices a benchmark that no longer runs.
test: deps test-db-start test-tools ## swift test against the test PostgreSQL, then the noise cross-check and the browser tests (TEST_FILTER=regex: swift tests only)
ifneq ($(TEST_FILTER),)
	$(RAISE_FD_LIMIT) D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' $(SWIFT) test --filter '$(TEST_FILTER)'
else
	@rm -f $(STAGE_TIMES)
	@$(STAGE) "swift build --build-tests" $(SWIFT) build --build-tests
	$(RAISE_FD_LIMIT) $(STAGE) "swift test (the parallel suite)" $(BOUNDED) env D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' $(SWIFT) test --skip '$(MEMORY_TESTS)|$(URLSESSION_TESTS)'
	$(RAISE_FD_LIMIT) $(STAGE) "swift test (URLSession suites)" $(BOUNDED) env D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' $(SWIFT) test --skip-build --filter '$(URLSESSION_TESTS)'
	@$(STAGE) "the checks after the suites, in two lanes" env STAGE_TIMES='$(STAGE_TIMES)' MAKE='$(MAKE)' bash scripts/test-lanes.sh test-lane-measured test-lane-served
	@echo "==== make test: seconds per stage ====" && cat $(STAGE_TIMES)
endif

# The checks after the Swift suites run in two lanes side by side (scripts/test-lanes.sh says why); each lane
# runs its checks one after another. The memory tests run the built test bundle itself: `swift test` would hold
# SwiftPM's lock on .build for their whole length, and the other lane's `make build` would wait for it. The noise check comes before the benchmarks: it installs scipy and opendp,
# which the percentiles' benchmark uses.
test-lane-measured: ## (part of make test) the memory tests, the noise cross-check, every benchmark at a tiny size
	$(RAISE_FD_LIMIT) $(STAGE) "swift test (memory tests)" env D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' $(TEST_BUNDLE) --testing-library swift-testing --filter '$(MEMORY_TESTS)'
	@$(STAGE) privacy-noise-check $(MAKE) --no-print-directory privacy-noise-check
	@$(STAGE) bench-smoke $(MAKE) --no-print-directory bench-smoke

test-lane-served: ## (part of make test) the browser tests, the README's walk-through, the FHIR check
	@$(STAGE) browser-test $(MAKE) --no-print-directory browser-test
	@$(STAGE) readme-walk $(MAKE) --no-print-directory readme-walk
	@$(STAGE) fhir-check $(MAKE) --no-print-directory fhir-check

# The Python tools the Swift tests start themselves (aiosmtpd for the SMTP transport's tests), in var/venv.
test-tools: ## install the Python tools the Swift tests run (aiosmtpd) into var/venv
	@bash scripts/test-tools.sh

# The Swift tests check the sampler against its exact pmf from inside; this checks `d4h-dev privacy noise` from outside,
# with scipy and against OpenDP's own sampler (both from PyPI, in var/venv). No database; about 20 s.
privacy-noise-check: deps build ## noise samplers (discrete Gaussian, exponential mechanism, percentiles) vs exact pmfs and OpenDP
	D4H_DEV='$(D4H_DEV)' bash scripts/privacy-noise-check.sh

browser-test: deps build test-db-start ## the web console in headless Chromium (selenium); screenshots to docs/screenshots
	D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' TEST_DB_PORT=$(TEST_DB_PORT) bash scripts/browser-tests.sh

readme-walk: deps build test-db-start ## the README's walk-through, run as written against a fresh seeded server
	D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' TEST_DB_PORT=$(TEST_DB_PORT) bash scripts/readme-walk.sh

fhir-check: deps build test-db-start ## the API's FHIR resources (Consent, AuditEvent, Observation downloads) against PyPI fhir.resources' R4 models
	D4H='$(D4H)' TEST_DB_PORT=$(TEST_DB_PORT) bash scripts/fhir-check.sh

# The check's name before it grew beyond Consent.
fhir-consent-check: fhir-check

bench: deps build test-db-start ## run bench/run (given D4H and D4H_TEST_DATABASE_URL)
	@if [ -x bench/run ]; then \
	    D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' bench/run; \
	elif [ -f bench/run ]; then \
	    D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' bash bench/run; \
	else \
	    echo "bench: bench/run does not exist yet"; \
	fi

# Every benchmark once at a tiny size (bench/smoke: seconds each, about two minutes in all on the debug build),
# so a benchmark that no longer runs fails `make test` the day it breaks; no figure is checked (`make bench`
# gives those). Its own databases (d4h_bench_smoke*, recreated each run) and ports (18270–18272).
.PHONY: bench-smoke
bench-smoke: deps build test-db-start ## every benchmark once at a tiny size (about a minute; part of make test): fails if one no longer runs or a server logs a warning
	D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' D4H_TEST_DATABASE_URL='$(TEST_DATABASE_URL)' bash bench/smoke

# Release build: the figures are meant for an operator, and debug Swift is several times slower.
loadtest: ## ~2 min mixed load on a release server: per-endpoint throughput, p50/p99/max, errors, RSS
	$(MAKE) build CONFIG=release
	D4H='$(CURDIR)/.build/release/d4h' D4H_DEV='$(CURDIR)/.build/release/d4h-dev' bash scripts/loadtest.sh

faults: ## fault scenarios on a release server: SIGKILL during ingest, database restart, two instances, hostile clients, group burst, failover (FAULTS_ONLY=…)
	$(MAKE) build CONFIG=release
	D4H='$(CURDIR)/.build/release/d4h' D4H_DEV='$(CURDIR)/.build/release/d4h-dev' bash scripts/faults.sh

# The style is .swift-format's (4-space indent, 150 columns); `make lint` is part of CI. The code generated from
# openapi.yaml (Sources/*/Generated) is the generator's, not ours: `make lint` checks instead that it is what
# openapi.yaml makes.
SWIFT_SOURCES = Package.swift $(shell find Sources Tests -name '*.swift' -not -path '*/Generated/*' | LC_ALL=C sort)

format: ## rewrite the Swift sources in the project's style (.swift-format)
	$(SWIFT) format --in-place --parallel $(SWIFT_SOURCES)

lint: ## check the Swift sources against .swift-format, and the generated code against openapi.yaml (CI runs it)
	@$(SWIFT) format lint --strict --parallel $(SWIFT_SOURCES) \
	    || { echo "lint: run \`make format\` to apply the project's style" >&2; exit 1; }
	@bash scripts/openapi.sh check

openapi: ## regenerate Sources/BrokerOpenAPI/Generated and Sources/Data4HelpClient/Generated from openapi.yaml (after editing it)
	@bash scripts/openapi.sh generate

fuzz: deps build test-db-start ## fuzz the HTTP API against openapi.yaml with schemathesis (≤ ~5 min)
	D4H='$(D4H)' D4H_DEV='$(D4H_DEV)' TEST_DB_PORT=$(TEST_DB_PORT) bash scripts/api-fuzz.sh
