"""Group burst: three companies send 60 group requests at once on a population of 20,000 people while a
person keeps reading their own profile. A group evaluation is the heaviest request there is (cohort over the
rollups, similarity check, first release with an access-log row per cohort member) and only a few run at a
time, so a burst queues. The queue must stay bounded and must not take the rest of the service with it:
every request answered within 60 s with 201 or a deliberate refusal (409, 429, 503), the person's reads still
fast (p99 < 1 s) and /health/ready 200 throughout. Run once with the default pool (20 connections) and once
with 4, where a burst runs out of connections first (issue 14 deadlocked the pool this way). Then SIGTERM
during a third burst: the server must exit within 15 s, not after the queue has drained.
"""
import datetime
import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter

from harness import REPO, Server, Verdict, call, create_accounts, d4h_dev, log_in

PEOPLE = 20_000  # as `make run`: about 1,400 people per sex and ten-year band, enough for the default k = 1000
DAYS = 7
SEED_TIMEOUT = 300  # seconds; `make run` says about half a minute for this population
COMPANIES = 3
PER_COMPANY = 20
BURST_TIMEOUT = 90.0  # client timeout of each group request
ANSWERED_WITHIN = 60.0  # seconds from the burst's start to its last answer
ALLOWED = (201, 409, 429, 503)  # created (accepted or refused), or turned away on purpose
ME_EVERY = 0.05
READY_EVERY = 0.25
PROBE_TIMEOUT = 10.0
P99_LIMIT = 1.0  # seconds, GET /v1/me during the burst
AT_REST_CALLS = 50
SIGTERM_AFTER = 2.0
EXIT_LIMIT = 15.0
# Rate limits are already off in Server (RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE=0 among them): the burst is
# meant to reach the evaluation, not the limiter.
SETTINGS = {"DATABASE_POOL_TIMEOUT": 5}


def run(d4h, cluster, ports):
    verdict = Verdict(f"group burst ({COMPANIES * PER_COMPANY} concurrent group requests on {PEOPLE:,} people; "
                      "pool 20, pool 4, SIGTERM under a burst)")
    seconds = seed(d4h, cluster)
    verdict.figure(f"population: {PEOPLE:,} synthetic people × {DAYS} days (d4h-dev seed) in {seconds:.0f} s; "
                   "GROUP_MIN_COHORT default (1000)")
    accounts = create_accounts(d4h, cluster, users=1, companies=COMPANIES)
    yesterday = datetime.datetime.now(datetime.timezone.utc).date() - datetime.timedelta(days=1)
    window = {"from": (yesterday - datetime.timedelta(days=DAYS - 1)).isoformat(), "to": yesterday.isoformat()}

    # Sessions live in the database, so the tokens from the first server work on the second.
    server = Server(d4h, cluster, ports[0], **SETTINGS).start()
    person = log_in(server, accounts["users"][0])
    companies = [log_in(server, company) for company in accounts["companies"]]
    measure(verdict, server, "pool 20 (default)", person, companies, window)
    verdict.require(server.alive, "pool 20: the server process died")
    server.stop()

    server = Server(d4h, cluster, ports[1], DATABASE_POOL_SIZE=4, **SETTINGS).start()
    measure(verdict, server, "pool 4", person, companies, window)
    verdict.require(server.alive, "pool 4: the server process died")

    # SIGTERM on the pool-4 server, the one a burst starves most, 2 s into a fresh burst.
    burst = Burst(server, companies, window).start()
    time.sleep(SIGTERM_AFTER)
    signalled = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=EXIT_LIMIT + 15)
        exited = time.monotonic() - signalled
    except subprocess.TimeoutExpired:
        exited = None
        server.kill()
    burst.join()
    during = f"SIGTERM {SIGTERM_AFTER:.0f} s into a burst of {len(burst.outcomes)} (pool 4)"
    if exited is None:
        verdict.require(False, f"SIGTERM: the server was still running {EXIT_LIMIT + 15:.0f} s later (killed)")
        verdict.figure(f"{during}: no exit within {EXIT_LIMIT + 15:.0f} s, killed; the burst got {burst.counts()}")
    else:
        verdict.require(exited <= EXIT_LIMIT, f"SIGTERM: the server took {exited:.1f} s to exit (limit {EXIT_LIMIT:.0f} s)")
        verdict.figure(f"{during}: exited after {exited:.1f} s with code {server.process.returncode}; "
                       f"the burst got {burst.counts()}")
    return verdict


def seed(d4h, cluster):
    """`d4h-dev seed` as `make run` does it (from the repository root: it reads Seeds/demo-accounts.json)."""
    started = time.monotonic()
    result = subprocess.run([d4h_dev(d4h), "seed", "--people", str(PEOPLE), "--days", str(DAYS)], cwd=REPO,
                            capture_output=True, text=True, timeout=SEED_TIMEOUT,
                            env=dict(os.environ, DATABASE_URL=cluster.database_url))
    if result.returncode != 0:
        raise RuntimeError(f"d4h-dev seed exited with {result.returncode}: {result.stderr[-500:]}")
    return time.monotonic() - started


def group_request(index, window):
    """Request `index` of a burst: its ten-year age band, sex, heart-rate band and step floor together differ
    from every other request's (index mod 7, 5 and 4 are unique below 140), as 60 separate studies would."""
    age = 20 + 10 * (index % 7)  # 20–29 … 80–89
    sex = ("F", "M", None)[index // 7 % 3]
    filters = [{"type": "heart_rate", "min": 45 + index % 5, "max": 85 + 5 * (index % 4)}]
    if index % 2:
        filters.append({"type": "step_count", "min": 2000 + 500 * (index % 3)})
    return {"types": ["heart_rate", "step_count"], "filters": filters,
            "demographics": {"ageMin": age, "ageMax": age + 9, **({"sex": sex} if sex else {})},
            "window": window, "bucket": "day", "purpose": f"Group burst study {index}",
            "purposeCode": "HRESCH"}


class Burst:
    """PER_COMPANY group requests per company, each on its own thread and connection, released together."""

    def __init__(self, server, companies, window):
        self.server, self.companies, self.window = server, companies, window
        self.outcomes = [None] * (len(companies) * PER_COMPANY)  # (status or error text, body, answered at)
        self.go = threading.Event()
        self.threads = [threading.Thread(target=self.send, args=(i,), daemon=True) for i in range(len(self.outcomes))]

    def start(self):
        for thread in self.threads:
            thread.start()
        self.started = time.monotonic()
        self.go.set()
        return self

    def send(self, index):
        self.go.wait()
        try:
            reply = call("POST", self.server.url("/v1/group-requests"), token=self.companies[index % len(self.companies)],
                         body=group_request(index, self.window), timeout=BURST_TIMEOUT)
            self.outcomes[index] = (reply.status, reply.body, time.monotonic())
        except OSError as error:  # includes the client timeout: no answer within 90 s
            self.outcomes[index] = (type(error).__name__, b"", time.monotonic())

    def join(self):
        deadline = self.started + BURST_TIMEOUT + 10
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def counts(self):
        """E.g. "40 × 201 (31 accepted, 9 refused cohort_too_similar), 20 × 503"."""
        counts = Counter("no answer" if o is None else o[0] for o in self.outcomes)
        created = Counter(" ".join(filter(None, (document["status"], document.get("refusalReason"))))
                          for document in (json.loads(o[1]) for o in self.outcomes if o and o[0] == 201))
        parts = []
        for key, n in sorted(counts.items(), key=lambda item: str(item[0])):
            detail = f" ({', '.join(f'{m} {what}' for what, m in sorted(created.items()))})" if key == 201 else ""
            parts.append(f"{n} × {key}{detail}")
        return ", ".join(parts)


class Probes:
    """What an unrelated client sees during a burst: GET /v1/me every 50 ms and /health/ready every 250 ms,
    each on a thread of its own so that a slow answer to one does not space out the other."""

    def __init__(self, server, token):
        self.server, self.token = server, token
        self.me, self.me_failures, self.ready = [], [], Counter()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.read_me, daemon=True),
                        threading.Thread(target=self.poll_ready, daemon=True)]

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(PROBE_TIMEOUT + 5)

    def read_me(self):
        while not self.stopping.is_set():
            try:
                reply = call("GET", self.server.url("/v1/me"), token=self.token, timeout=PROBE_TIMEOUT)
                self.me.append(reply.seconds)
                if reply.status != 200:
                    self.me_failures.append(reply.status)
            except OSError as error:
                self.me_failures.append(type(error).__name__)
            time.sleep(ME_EVERY)

    def poll_ready(self):
        while not self.stopping.is_set():
            try:
                self.ready[call("GET", self.server.url("/health/ready"), timeout=PROBE_TIMEOUT).status] += 1
            except OSError as error:
                self.ready[type(error).__name__] += 1
            time.sleep(READY_EVERY)


def measure(verdict, server, label, person, companies, window):
    """Steps 4 and 5 on one server: GET /v1/me at rest, then the same during a burst."""
    at_rest = []
    for _ in range(AT_REST_CALLS):
        reply = call("GET", server.url("/v1/me"), token=person, timeout=PROBE_TIMEOUT)
        verdict.require(reply.status == 200, f"{label}: GET /v1/me at rest answered {reply.status}")
        at_rest.append(reply.seconds)
    ready = call("GET", server.url("/health/ready"), timeout=PROBE_TIMEOUT)
    verdict.require(ready.status == 200, f"{label}: /health/ready answered {ready.status} at rest")
    verdict.figure(f"{label}, at rest: GET /v1/me ×{AT_REST_CALLS} {percentiles(at_rest)}; /health/ready {ready.status}")

    probes = Probes(server, person).start()
    burst = Burst(server, companies, window).start()
    burst.join()
    probes.stop()

    answered = [o for o in burst.outcomes if o is not None and isinstance(o[0], int)]
    wrong = Counter(o[0] if o else "no answer" for o in burst.outcomes if o is None or o[0] not in ALLOWED)
    verdict.require(not wrong, f"{label}: burst requests answered otherwise than {ALLOWED}: {dict(wrong)}")
    if verdict.require(answered, f"{label}: no burst request was answered"):
        last = max(o[2] for o in answered) - burst.started
        verdict.require(last <= ANSWERED_WITHIN, f"{label}: the last burst request was answered after {last:.1f} s "
                        f"(limit {ANSWERED_WITHIN:.0f} s)")
        verdict.figure(f"{label}, burst of {len(burst.outcomes)}: {burst.counts()}; last answer after {last:.1f} s")
    else:
        verdict.figure(f"{label}, burst of {len(burst.outcomes)}: {burst.counts()}")

    p99 = percentile(probes.me, 0.99)
    verdict.require(not probes.me_failures, f"{label}: GET /v1/me during the burst failed: {probes.me_failures[:3]}")
    verdict.require(p99 <= P99_LIMIT, f"{label}: GET /v1/me p99 during the burst was {p99 * 1000:.0f} ms "
                    f"(limit {P99_LIMIT * 1000:.0f} ms)")
    not_ready = {k: n for k, n in probes.ready.items() if k != 200}
    verdict.require(not not_ready, f"{label}: /health/ready during the burst answered {not_ready}")
    verdict.figure(f"{label}, during the burst: GET /v1/me ×{len(probes.me)} {percentiles(probes.me)}, "
                   f"{len(probes.me_failures)} failures; /health/ready {dict(probes.ready)}")


def percentile(values, fraction):
    """The nearest-rank percentile (as in hostile_clients.py); infinite when there is no value."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))] if ordered else float("inf")


def percentiles(values):
    return (f"p50 {percentile(values, 0.5) * 1000:.1f} ms, p99 {percentile(values, 0.99) * 1000:.1f} ms, "
            f"max {max(values, default=float('inf')) * 1000:.1f} ms")
