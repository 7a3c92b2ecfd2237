"""PostgreSQL that survives losing a machine (issue 34), on a pg_auto_failover formation of its own (a monitor, a
primary and a synchronous secondary: scripts/pg-ha.sh) with two servers on its multi-host URL.

  failover        phones upload heart-rate batches to both servers while a company asks people for their data,
                  they accept and it downloads (grants, releases, audit events); the primary's machine is lost
                  (SIGKILL to its postgres, backends and pg_autoctl keeper at once), the monitor promotes the
                  secondary, uploads go on. Measured: the outage as clients saw it (first to last failed answer),
                  how many requests saw 503, and that none saw a 500 or went unanswered. Checked on the new primary:
                  every acknowledged sample (counts per person), every acknowledged grant and release in the audit
                  log, the audit chain; then the old primary rejoins as a secondary.
  monitor-lost    the monitor is lost: writes must go on untouched; it is restarted and the formation converges.
  secondary-lost  the secondary is lost: pg_auto_failover documents that the primary goes to wait_primary and
                  turns synchronous replication off, so writes pause at most for the detection and go on; measured
                  as the clients saw it. The secondary is restarted and must catch up (same counts as the primary).
"""
import json
import signal
import os
import subprocess
import threading
import time
from collections import Counter

from harness import OUT, Server, Verdict, call, create_accounts, heart_rate_batch, log_in, wait_until

PEOPLE = 6
PHONES = 3  # threads; phone t uploads for people t, t + PHONES, … in turn
BATCH = 200
TIMEOUT = 30.0  # a client's timeout for one request
HANG_LIMIT = 10.0  # an answer slower than this counts as a hang
OUTAGE_GOAL = 15.0  # seconds of failed answers the issue allows
BASE_EPOCH = 1_610_000_000


def batch_start(person, index):
    return BASE_EPOCH + person * 10_000_000 + index * BATCH


class Traffic:
    """Phones uploading and a company asking, granting (as the person) and downloading, across both servers; every
    answer is recorded with the time it was sent and received."""

    def __init__(self, servers, people, tokens, company):
        self.servers, self.people, self.tokens, self.company = servers, people, tokens, company
        self.events = []  # (sent, received, kind, status or None, detail, port)
        self.acknowledged = [set() for _ in people]  # batch indices answered 200 per person
        self.unanswered = [set() for _ in people]  # batch indices answered 503 or not at all (outcome unknown)
        self.acked_at = {}  # (person, batch index) -> when its acknowledgement arrived (time.monotonic())
        self.committed_before_503 = 0  # of those, batches the re-send found already stored
        self.requests = {}  # request id -> set of acknowledged steps ("created", "accepted", "released")
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.turn = 0
        self.threads = [threading.Thread(target=self.phone, args=(t,), daemon=True) for t in range(PHONES)]
        self.threads.append(threading.Thread(target=self.asker, daemon=True))

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=TIMEOUT + 10)
        return [thread for thread in self.threads if thread.is_alive()]

    def server(self):
        with self.lock:
            self.turn += 1
            return self.servers[self.turn % len(self.servers)]

    def send(self, kind, method, path, token, body=None):
        server = self.server()
        sent = time.monotonic()
        try:
            reply = call(method, server.url(path), token=token, body=body, timeout=TIMEOUT)
        except OSError as error:
            with self.lock:
                self.events.append((sent, time.monotonic(), kind, None, f"{type(error).__name__}: {error}", server.port))
            return None
        detail = ""
        if reply.status >= 300:
            try:
                problem = reply.json().get("type", "").rsplit("/", 1)[-1]
            except ValueError:
                problem = "(not JSON)"
            detail = (f"{problem} {reply.headers.get('content-type')} retry-after={reply.headers.get('retry-after')} "
                      f"{reply.body[:160]!r}")
        with self.lock:
            self.events.append((sent, sent + reply.seconds, kind, reply.status, detail, server.port))
        reply.sent, reply.port = sent, server.port
        return reply

    def pause_after(self, reply):
        # A 503 says when to come back (Retry-After); the phones come back sooner, to time the outage closely.
        self.stop.wait(0.3 if reply is None or reply.status == 503 else 0.5)

    def phone(self, thread):
        mine = list(range(thread, len(self.people), PHONES))
        index = {person: 0 for person in mine}
        turn = 0
        while not self.stop.is_set():
            person = mine[turn % len(mine)]
            turn += 1
            body = heart_rate_batch(batch_start(person, index[person]), BATCH)
            reply = self.send("upload", "POST", "/v1/me/samples", self.tokens[person], body)
            result = reply.json() if reply is not None and reply.status == 200 else {}
            if result.get("accepted", 0) + result.get("duplicates", 0) == BATCH:
                with self.lock:
                    self.acknowledged[person].add(index[person])
                    self.acked_at[(person, index[person])] = (reply.sent, time.monotonic(), reply.port, result.get("accepted"),
                                                              result.get("duplicates"))
                    if index[person] in self.unanswered[person] and result.get("duplicates"):
                        # A 503 (or no answer) for a write under way means "outcome unknown": this one had
                        # committed, and the re-send found its samples stored (idempotent on (type, at)).
                        self.committed_before_503 += 1
                    self.unanswered[person].discard(index[person])
                index[person] += 1  # the next batch; otherwise the same one again
            else:
                if reply is None or reply.status == 503:
                    with self.lock:
                        self.unanswered[person].add(index[person])
                self.pause_after(reply)

    def step(self, kind, method, path, token, body=None, ok=(200, 201)):
        """Sends until answered (a 503 or no answer: again), as a client that follows Retry-After would."""
        while not self.stop.is_set():
            reply = self.send(kind, method, path, token, body)
            if reply is not None and reply.status != 503:
                return reply if reply.status in ok else None
            self.pause_after(reply)
        return None

    def asker(self):
        cycle = 0
        while not self.stop.is_set():
            person = cycle % len(self.people)
            cycle += 1
            created = self.step("ask", "POST", "/v1/single-requests", self.company,
                                {"subject": {"email": self.people[person]["email"]}, "types": ["heart_rate"],
                                 "purpose": "Failover drill", "purposeCode": "HRESCH", "subscription": {"days": 30}})
            if created is None:
                continue
            request = created.json()["id"]
            with self.lock:
                self.requests[request] = {"created"}
            if self.step("grant", "POST", f"/v1/single-requests/{request}/accept", self.tokens[person]) is None:
                continue
            with self.lock:
                self.requests[request].add("accepted")
            data = self.step("release", "GET", f"/v1/single-requests/{request}/data", self.company)
            if data is not None and data.status == 200 and data.json().get("items"):
                with self.lock:
                    self.requests[request].add("released")
            self.stop.wait(0.3)

    # ---- what the clients saw ----

    def window(self, since, kinds=None, until=None):
        """Figures of the requests (of `kinds`, default all) answered (or given up on) at or after `since` — so a
        request under way at that moment counts — and sent before `until`."""
        with self.lock:
            events = [e for e in self.events if e[1] >= since and (until is None or e[0] < until)
                      and (kinds is None or e[2] in kinds)]
        # A download before the person's data arrived answers 409 no-requested-data: an answer, not a failure.
        expected = [e for e in events if e[2] == "release" and e[3] == 409 and "no-requested-data" in e[4]]
        failed = [e for e in events if (e[3] is None or e[3] >= 300) and e not in expected]
        statuses = Counter("no answer" if e[3] is None else e[3] for e in events if e not in expected)
        figures = {
            "requests": len(events),
            "statuses": dict(statuses),
            "503": statuses.get(503, 0),
            "500": sum(n for status, n in statuses.items() if isinstance(status, int) and status >= 500 and status != 503),
            "4xx": sum(n for status, n in statuses.items() if isinstance(status, int) and 400 <= status < 500),
            "unanswered": statuses.get("no answer", 0),
            "slow": sum(1 for e in events if e[1] - e[0] > HANG_LIMIT),
            "slowest": max((e[1] - e[0] for e in events), default=0.0),
            "outage": (max(e[1] for e in failed) - min(e[0] for e in failed)) if failed else 0.0,
            "no data yet": len(expected),
            "first_failure": min((e[0] for e in failed), default=None),
            "last_failure": max((e[1] for e in failed), default=None),
            "bad_503": [e for e in failed if e[3] == 503 and not ("problem+json" in e[4] and "retry-after=None" not in e[4])],
            "failed": failed,
        }
        return figures

    def dump(self, path, since):
        """Every request as JSON lines (seconds relative to `since`), for reading a run afterwards."""
        with self.lock, open(path, "w") as file:
            for sent, received, kind, status, detail, port in self.events:
                file.write(json.dumps({"sent": round(sent - since, 3), "seconds": round(received - sent, 3), "kind": kind,
                                       "status": status, "detail": detail, "server": port}) + "\n")

    def acked_samples(self):
        with self.lock:
            return [len(batches) * BATCH for batches in self.acknowledged]


def check_samples(verdict, formation, accounts, traffic, port, label):
    """Every acknowledged batch whole on the node at `port`, no partial batch, nothing beyond what was sent."""
    lost, partial, per_person = [], [], []
    for person, account in enumerate(accounts):
        rows = formation.psql(f"SELECT (extract(epoch FROM at)::bigint - {batch_start(person, 0)}) / {BATCH}, count(*) "
                              f"FROM samples WHERE user_id = '{account['id']}' GROUP BY 1", port=port)
        stored = {int(index): int(count) for index, count in rows}
        with traffic.lock:
            acked = set(traffic.acknowledged[person])
            unanswered = set(traffic.unanswered[person])
        lost += [(person, index) for index in acked if stored.get(index) != BATCH]
        partial += [(person, index, count) for index, count in stored.items() if count != BATCH]
        extra = set(stored) - acked - unanswered
        verdict.require(not extra, f"{label}: person {person} has batches never sent or answered: {sorted(extra)[:5]}")
        per_person.append(f"{len(acked) * BATCH}/{sum(stored.values())}")
    if lost and getattr(traffic, "killed_at", None) is not None:
        with traffic.lock:
            when = [(f"sent {traffic.acked_at[key][0] - traffic.killed_at:+.3f} s", f"answered {traffic.acked_at[key][1] - traffic.killed_at:+.3f} s")
                    + traffic.acked_at[key][2:] for key in lost[:5] if key in traffic.acked_at]
        verdict.figure(f"{label}: the lost batches (from the kill; server; accepted; duplicates): {when}")
    verdict.require(not lost, f"{label}: acknowledged batches missing or short: {lost[:5]}")
    verdict.require(not partial, f"{label}: partial batches: {partial[:5]}")
    return len(lost) * BATCH, per_person


def check_audit(verdict, formation, traffic, d4h, port):
    """Every acknowledged grant and release has its audit event, and the chain verifies (`d4h audit verify`)."""
    rows = formation.psql("SELECT request_id, action FROM audit_events WHERE request_id IS NOT NULL", port=port)
    logged = {(request, action) for request, action in rows}
    wanted = {"created": "single_request.created", "accepted": "single_request.accepted",
              "released": "single_request.data_released"}
    with traffic.lock:
        requests = {request: set(steps) for request, steps in traffic.requests.items()}
    missing = [(request, step) for request, steps in requests.items() for step in steps
               if (request, wanted[step]) not in logged]
    counts = Counter(step for steps in requests.values() for step in steps)
    verdict.require(not missing, f"acknowledged steps without their audit event: {missing[:5]}")
    verify = subprocess.run([d4h, "audit", "verify", "--database-url", formation.url(port)], capture_output=True, text=True,
                            timeout=120)
    verdict.require(verify.returncode == 0, f"d4h audit verify failed ({verify.returncode}): {(verify.stdout + verify.stderr)[-300:]}")
    events = formation.psql("SELECT count(*) FROM audit_events", port=port)[0][0]
    return (f"{counts['created']} requests, {counts['accepted']} grants, {counts['released']} releases acknowledged, "
            f"{len(missing)} without their audit event; audit chain of {events} events: "
            f"{'verifies' if verify.returncode == 0 else 'BROKEN'} ({verify.stdout.strip().splitlines()[-1] if verify.stdout.strip() else ''})")


def check_mail(verdict, formation, port):
    """Background work resumed on the new primary: the mail outbox (grant and first-download notices) drains."""
    sql = "SELECT status, count(*), coalesce(max(attempts), 0) FROM mail_outbox GROUP BY 1"
    drained = wait_until(lambda: not any(status == "pending" for status, _, _ in formation.psql(sql, port=port)), within=60, step=1)
    rows = {status: (int(count), int(attempts)) for status, count, attempts in formation.psql(sql, port=port)}
    verdict.require(drained, f"mail outbox not drained within 60 s: {rows}")
    verdict.require("dead" not in rows, f"dead mails: {rows.get('dead')}")
    return (f"mail outbox: {sum(count for count, _ in rows.values())} mails, "
            + ", ".join(f"{status} {count} (at most {attempts} attempts)" for status, (count, attempts) in sorted(rows.items())))


def check_server_logs(verdict, servers):
    """A download whose release could not be recorded: data went out with no audit event and no access-log line."""
    unrecorded = []
    for server in servers:
        with open(server.log_path, errors="replace") as file:
            for line in file:
                if "a download was sent but could not be recorded" in line:
                    rows = line.split(" rows=", 1)[1].split()[0] if " rows=" in line else "?"
                    request = line.split(" request.id=", 1)[1].split()[0] if " request.id=" in line else "?"
                    cause = "poolShutdown" if "poolShutdown" in line else ("connection reset" if "reset by peer" in line else "error")
                    unrecorded.append(f":{server.port} request {request}, {rows} rows ({cause})")
    verdict.require(not unrecorded, f"downloads sent but not recorded (no audit event, no access log): {unrecorded}")
    return f"releases sent but not recorded (server logs): {len(unrecorded)}" + (f": {unrecorded}" if unrecorded else "")


def unanswered_details(figures, since):
    """The requests that got no answer: what they were, when sent, how long they waited, what the client saw."""
    return [f"{e[2]} sent {_at(e[0], since)}, gave up after {e[1] - e[0]:.1f} s: {e[4]}" for e in figures["failed"] if e[3] is None]


def setup(d4h, formation, ports, verdict):
    primary = formation.primary()
    servers = [Server(d4h, formation, port).start() for port in ports]
    try:
        accounts = create_accounts(d4h, formation, users=PEOPLE, companies=1)
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"d4h-dev bench accounts failed: {(error.stderr or '')[-800:]}") from error
    people = accounts["users"]
    tokens = [log_in(servers[i % len(servers)], person) for i, person in enumerate(people)]
    company = log_in(servers[0], accounts["companies"][0])
    verdict.figure(f"formation {formation.name}: primary {primary}; servers on :{ports[0]} and :{ports[1]} with "
                   f"{formation.database_url.split('@')[1]}")
    return servers, people, Traffic(servers, people, tokens, company)


def sync_names(formation, port):
    """synchronous_standby_names on the node at `port` ('' when synchronous replication is off)."""
    rows = formation.psql("SELECT 'value=' || current_setting('synchronous_standby_names')", port=port)
    return rows[0][0][len("value="):]


def safe_states(formation):
    try:
        return formation.states()
    except (subprocess.SubprocessError, OSError):
        return {}


def report_window(verdict, figures, label, started):
    verdict.figure(f"{label}: {figures['requests']} requests, statuses {figures['statuses']}; failed answers from "
                   f"{_at(figures['first_failure'], started)} to {_at(figures['last_failure'], started)}: outage "
                   f"{figures['outage']:.1f} s as clients saw it; 503: {figures['503']}, 500s: {figures['500']}, "
                   f"unanswered: {figures['unanswered']}, slower than {HANG_LIMIT:.0f} s: {figures['slow']} "
                   f"(slowest {figures['slowest']:.1f} s)")


def _at(moment, started):
    return "—" if moment is None else f"{moment - started:+.1f} s"


def run_failover(d4h, formation, ports):
    verdict = Verdict("failover: the primary's machine lost mid-stream (pg_auto_failover promotes the secondary)")
    servers, people, traffic = setup(d4h, formation, ports, verdict)
    old = formation.primary()
    new = "node2" if old == "node1" else "node1"
    traffic.start()
    time.sleep(8)
    before = traffic.window(0, until=time.monotonic() - 1)
    verdict.require(before["requests"] > 0 and not before["failed"], f"failures before the kill: {[e[2:5] for e in before['failed']][:3]}")

    verdict.figure(f"before the kill: {safe_states(formation)}; synchronous_standby_names on {old} = "
                   f"{sync_names(formation, formation.port_of(old))!r}")
    killed_at = time.monotonic()
    traffic.killed_at = killed_at
    pids = formation.kill(old)
    verdict.figure(f"SIGKILL to {old}'s pg_autoctl, postgres and backends ({len(pids)} processes) at +0.0 s")
    promoted = wait_until(lambda: formation.primary() == new, within=90)
    promoted_at = time.monotonic()
    if not verdict.require(promoted, f"{new} not promoted within 90 s: {safe_states(formation)}"):
        traffic.finish()
        return verdict
    verdict.figure(f"monitor: {new} writable (wait_primary) at +{promoted_at - killed_at:.1f} s")
    # Service is back once uploads succeed again; then a while more of it.
    resumed = wait_until(lambda: any(e[0] > promoted_at and e[2] == "upload" and e[3] == 200 for e in list(traffic.events)),
                         within=60)
    verdict.require(resumed, "no upload succeeded within 60 s of the promotion")
    time.sleep(10)
    stuck = traffic.finish()
    verdict.require(not stuck, f"{len(stuck)} client threads still waiting {TIMEOUT + 10:.0f} s after the end")

    after = traffic.window(killed_at)
    report_window(verdict, after, "from the kill on", killed_at)
    uploads = traffic.window(killed_at, kinds={"upload"})
    verdict.figure(f"uploads alone: failed answers from {_at(uploads['first_failure'], killed_at)} to "
                   f"{_at(uploads['last_failure'], killed_at)} (outage {uploads['outage']:.1f} s), {uploads['503']} × 503")
    verdict.require(after["500"] == 0, f"{after['500']} answers were 5xx other than 503: "
                                       f"{[e[3:5] for e in after['failed'] if e[3] and e[3] != 503][:3]}")
    verdict.require(after["unanswered"] == 0, f"{after['unanswered']} requests got no answer: {unanswered_details(after, killed_at)[:3]}")
    verdict.require(after["slow"] == 0, f"{after['slow']} requests took longer than {HANG_LIMIT} s")
    verdict.require(not after["bad_503"], f"503s without problem+json or Retry-After: {[e[4] for e in after['bad_503']][:2]}")
    verdict.require(after["outage"] < OUTAGE_GOAL, f"outage {after['outage']:.1f} s (goal < {OUTAGE_GOAL:.0f} s)")
    unexpected = {s: n for s, n in after["statuses"].items() if s not in (200, 201, 503)}
    verdict.require(not unexpected, f"unexpected statuses: {unexpected} e.g. "
                                    f"{[e[3:5] for e in after['failed'] if e[3] not in (None, 503)][:3]}")
    for server in servers:
        verdict.require(server.alive, f"server :{server.port} died")

    # Everything acknowledged is on the new primary.
    port = formation.port_of(new)
    lost, per_person = check_samples(verdict, formation, people, traffic, port, "new primary")
    acked = sum(traffic.acked_samples())
    verdict.figure(f"lost: {lost} of {acked} acknowledged samples (per person acknowledged/stored: {', '.join(per_person)}); "
                   f"{traffic.committed_before_503} batches answered 503 had committed (their re-send: all duplicates)")
    verdict.figure(check_audit(verdict, formation, traffic, d4h, port))
    verdict.figure(check_mail(verdict, formation, port))
    verdict.figure(check_server_logs(verdict, servers))
    traffic.dump(os.path.join(OUT, "failover-requests.jsonl"), killed_at)

    # The old primary comes back as a secondary (pg_rewind, then streaming from the new primary).
    rejoin_started = time.monotonic()
    formation.start()
    states = formation.states()
    verdict.require(states.get(old) == ("secondary", "secondary") and states.get(new) == ("primary", "primary"),
                    f"after the restart: {states}")
    verdict.figure(f"{old} restarted: secondary again after {time.monotonic() - rejoin_started:.0f} s; pg_autoctl show state:")
    for line in formation.show_state().splitlines():
        verdict.figure("    " + line)
    lost_on_old, _ = check_samples(verdict, formation, people, traffic, formation.port_of(old), "rejoined old primary")
    verdict.figure(f"the rejoined {old} holds every acknowledged sample too (lost there: {lost_on_old})")
    for server in servers:
        server.stop()
    return verdict


def run_monitor_lost(d4h, formation, ports):
    verdict = Verdict("monitor lost: writes go on, the monitor restarts")
    servers, people, traffic = setup(d4h, formation, ports, verdict)
    primary = formation.primary()
    traffic.start()
    time.sleep(5)
    killed_at = time.monotonic()
    pids = formation.kill("monitor")
    verdict.figure(f"SIGKILL to the monitor's pg_autoctl and postgres ({len(pids)} processes) at +0.0 s; 15 s without it")
    time.sleep(15)
    during = traffic.window(killed_at)
    report_window(verdict, during, "without the monitor", killed_at)
    verdict.require(not during["failed"], f"writes failed without the monitor: {during['statuses']}")
    port = formation.port_of(primary)
    sync = sync_names(formation, port)
    verdict.figure(f"{primary} still primary, synchronous_standby_names = {sync!r} (synchronous replication "
                   f"{'still on' if sync else 'off'})")
    restarted = time.monotonic()
    formation.start()
    verdict.figure(f"monitor restarted; primary and secondary again after {time.monotonic() - restarted:.0f} s "
                   f"(states {formation.states()})")
    time.sleep(3)
    traffic.finish()
    whole = traffic.window(0)
    verdict.require(not whole["failed"], f"failed answers over the whole run: {[e[2:5] for e in whole['failed']][:3]}")
    lost, per_person = check_samples(verdict, formation, people, traffic, formation.primary_port(), "primary")
    verdict.figure(f"lost: {lost} of {sum(traffic.acked_samples())} acknowledged samples")
    verdict.figure(check_audit(verdict, formation, traffic, d4h, formation.primary_port()))
    verdict.figure(check_server_logs(verdict, servers))
    for server in servers:
        server.stop()
    return verdict


def run_secondary_lost(d4h, formation, ports):
    verdict = Verdict("secondary lost: the primary goes on alone (wait_primary), the secondary catches up")
    servers, people, traffic = setup(d4h, formation, ports, verdict)
    primary = formation.primary()
    secondary = "node2" if primary == "node1" else "node1"
    port = formation.port_of(primary)
    traffic.start()
    time.sleep(5)
    killed_at = time.monotonic()
    pids = formation.kill(secondary)
    verdict.figure(f"SIGKILL to the secondary {secondary} ({len(pids)} processes) at +0.0 s")
    alone = wait_until(lambda: safe_states(formation).get(primary) == ("wait_primary", "wait_primary"), within=60)
    alone_at = time.monotonic()
    if verdict.require(alone, f"{primary} not in wait_primary within 60 s: {safe_states(formation)}"):
        sync = sync_names(formation, port)
        verdict.figure(f"{primary} in wait_primary at +{alone_at - killed_at:.1f} s; synchronous_standby_names = "
                       f"{sync!r} (synchronous replication {'still on' if sync else 'off'})")
    time.sleep(8)
    during = traffic.window(killed_at)
    report_window(verdict, during, "without the secondary", killed_at)
    with traffic.lock:
        uploads = sorted((e[0], e[1]) for e in traffic.events if e[2] == "upload" and e[0] >= killed_at and e[3] == 200)
    slowest = max((done - sent for sent, done in uploads), default=0.0)
    verdict.figure(f"writes {'paused' if slowest > 1.5 else 'did not pause'}: slowest acknowledged upload after the kill "
                   f"{slowest:.1f} s (commits wait for the lost synchronous standby until the primary is wait_primary)")
    verdict.require(during["500"] == 0 and during["unanswered"] == 0, f"500s or unanswered: {during['statuses']}")
    restarted = time.monotonic()
    formation.start()
    verdict.figure(f"{secondary} restarted: secondary again after {time.monotonic() - restarted:.0f} s "
                   f"(states {formation.states()}; synchronous_standby_names = "
                   f"{sync_names(formation, port)!r})")
    time.sleep(3)
    traffic.finish()
    lost, per_person = check_samples(verdict, formation, people, traffic, port, "primary")
    verdict.figure(f"lost: {lost} of {sum(traffic.acked_samples())} acknowledged samples")
    # The secondary applies what it missed: the same counts on both nodes once it is a secondary again.
    count_sql = "SELECT count(*) FROM samples"
    caught_up = wait_until(lambda: formation.psql(count_sql, port=port) == formation.psql(count_sql, port=formation.port_of(secondary)),
                           within=30, step=0.5)
    counts = formation.psql(count_sql, port=port)[0][0], formation.psql(count_sql, port=formation.port_of(secondary))[0][0]
    verdict.require(caught_up, f"the secondary did not catch up within 30 s: primary {counts[0]}, secondary {counts[1]} samples")
    verdict.figure(f"caught up: {counts[1]} samples on the secondary, {counts[0]} on the primary")
    verdict.figure(check_audit(verdict, formation, traffic, d4h, port))
    verdict.figure(check_server_logs(verdict, servers))
    for server in servers:
        server.stop()
    return verdict


def run_sync_wait_cut(d4h, formation, ports):
    """A backend told to stop while its commit waits for the synchronous standby must not leak an acknowledgement.

    The standby's WAL receiver is frozen (SIGSTOP), so a write's commit waits on the primary (wait_event SyncRep);
    the waiting backend is then ended (pg_terminate_backend, as a fast shutdown or a demotion of a primary cut off
    from its standby would). For a statement sent outside a transaction PostgreSQL answers with a warning that
    flushes the statement's result, already buffered before the commit. Two writes are cut so: an upload (one
    statement, confirmed on its connection) and a logout (a transaction). Each must be answered 503 (outcome
    unknown), never 2xx for a commit the standby may not have. Then the receiver goes on: the same batch, sent
    again, is stored once, and the token whose logout was cut no longer works (its commit was made on the primary).
    """
    verdict = Verdict("sync wait cut: a commit waiting for the standby whose backend is ended is not acknowledged")
    servers, people, traffic = setup(d4h, formation, ports, verdict)
    primary = formation.primary()
    secondary = "node2" if primary == "node1" else "node1"
    primary_port, secondary_port = formation.port_of(primary), formation.port_of(secondary)
    receiver = formation.psql("SELECT pid FROM pg_stat_wal_receiver", port=secondary_port)
    if not verdict.require(receiver, f"{secondary} has no WAL receiver"):
        return verdict
    receiver_pid = int(receiver[0][0])
    waiting = "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'"

    def cut(what, request):
        """Sends `request` while the standby's receiver is frozen, ends the backend whose commit waits for it, and
        returns the answer (None when there was none) and its status."""
        answer = {}

        def send():
            try:
                answer["reply"] = request()
            except OSError as error:
                answer["error"] = f"{type(error).__name__}: {error}"

        os.kill(receiver_pid, signal.SIGSTOP)
        try:
            thread = threading.Thread(target=send)
            thread.start()
            blocked = wait_until(lambda: formation.psql(waiting, port=primary_port), within=10)
            if verdict.require(blocked, f"the {what}'s commit never waited for the standby (wait_event SyncRep)"):
                ended = formation.psql(f"SELECT pg_terminate_backend(pid) FROM ({waiting}) w", port=primary_port)
                verdict.figure(f"{what}: {secondary}'s WAL receiver (pid {receiver_pid}) frozen; the commit waited for it "
                               f"on {primary}; {len(ended)} waiting backend(s) ended")
            thread.join(TIMEOUT + 5)
        finally:
            os.kill(receiver_pid, signal.SIGCONT)
        reply = answer.get("reply")
        status = reply.status if reply is not None else answer.get("error", "no answer")
        verdict.figure(f"the {what} whose commit was cut short was answered {status}")
        verdict.require(reply is not None and reply.status == 503,
                        f"the {what} was answered {status}, not 503: a commit the standby may not have was acknowledged"
                        + (f" ({reply.body[:200]!r})" if reply is not None else ""))
        return reply

    body = heart_rate_batch(batch_start(0, 0), BATCH)
    cut("upload", lambda: call("POST", servers[0].url("/v1/me/samples"), token=traffic.tokens[0], body=body, timeout=TIMEOUT))
    caught_up = wait_until(lambda: formation.psql(f"SELECT count(*) FROM samples WHERE user_id = '{people[0]['id']}'",
                                                  port=secondary_port)[0][0] != "0", within=30)
    again = call("POST", servers[0].url("/v1/me/samples"), token=traffic.tokens[0], body=body, timeout=TIMEOUT)
    result = again.json() if again.status == 200 else {}
    verdict.figure(f"after the receiver went on: the standby {'holds' if caught_up else 'does not hold'} the batch (committed on the "
                   f"primary before the cut); sent again: {again.status}, accepted {result.get('accepted')}, duplicates "
                   f"{result.get('duplicates')}")
    verdict.require(again.status == 200 and result.get("accepted", 0) + result.get("duplicates", 0) == BATCH,
                    f"the batch sent again was answered {again.status} {again.body[:200]!r}")

    # A logout told 204 and then lost would leave the token working after a failover.
    token = traffic.tokens[1]
    cut("logout", lambda: call("DELETE", servers[0].url("/v1/sessions/current"), token=token, timeout=TIMEOUT))
    revoked = wait_until(lambda: call("GET", servers[0].url("/v1/me"), token=token, timeout=TIMEOUT).status == 401, within=30)
    verdict.figure(f"after the receiver went on, the token whose logout was cut {'no longer works' if revoked else 'still works'}")
    verdict.require(revoked, "the token whose logout committed on the primary still works")
    for server in servers:
        verdict.require(server.alive, f"server :{server.port} died")
        server.stop()
    return verdict
