"""Database restart under load: PostgreSQL is stopped (fast shutdown) while clients upload and read. While it
is down the service must answer 503 problem+json quickly (no hang, no crash) and /health/ready must say
not ready; once it is back the service must resume by itself within seconds, with no acknowledged write lost.
"""
import threading
import time

from harness import Server, Verdict, call, create_accounts, heart_rate_batch, log_in

UPLOADERS = 3
READERS = 2
BATCH = 1000
DOWN_FOR = 6.0
HANG_LIMIT = 5.0  # seconds: no request may wait longer than this for its answer
RESUME_LIMIT = 10.0  # seconds from the database being back to the service answering again


def run(d4h, cluster, port):
    verdict = Verdict("database restart under load (fast shutdown, 6 s down)")
    server = Server(d4h, cluster, port).start()
    accounts = create_accounts(d4h, cluster, users=UPLOADERS + READERS)["users"]
    tokens = [log_in(server, account) for account in accounts]

    events = []  # (monotonic time, kind, status, seconds, content type)
    acknowledged = [set() for _ in range(UPLOADERS)]
    lock = threading.Lock()
    stop = threading.Event()

    def record(kind, reply=None, error=None, seconds=0.0):
        with lock:
            if reply is None:
                events.append((time.monotonic(), kind, None, seconds, str(error)))
            else:
                events.append((time.monotonic(), kind, reply.status, reply.seconds, reply.headers.get("content-type")))

    def upload(client):
        index = 0
        while not stop.is_set():
            body = heart_rate_batch(1_590_000_000 + client * 10_000_000 + index * BATCH, BATCH)
            started = time.monotonic()
            try:
                reply = call("POST", server.url("/v1/me/samples"), token=tokens[client], body=body, timeout=30)
            except OSError as error:
                record("upload", error=error, seconds=time.monotonic() - started)
                time.sleep(0.2)
                continue
            record("upload", reply)
            if reply.status == 200:
                acknowledged[client].add(index)
                index += 1
            else:
                time.sleep(0.2)  # a 503 says "try again shortly": the same batch again

    def read(reader):
        token = tokens[UPLOADERS + reader]
        while not stop.is_set():
            started = time.monotonic()
            try:
                record("read", call("GET", server.url("/v1/me"), token=token, timeout=30))
            except OSError as error:
                record("read", error=error, seconds=time.monotonic() - started)
            time.sleep(0.1)

    threads = [threading.Thread(target=upload, args=(c,), daemon=True) for c in range(UPLOADERS)]
    threads += [threading.Thread(target=read, args=(r,), daemon=True) for r in range(READERS)]
    for thread in threads:
        thread.start()
    time.sleep(3)

    down_at = time.monotonic()
    cluster.stop()
    stopped_at = time.monotonic()
    time.sleep(1.5)
    ready = call("GET", server.url("/health/ready"), timeout=10)
    verdict.require(ready.status == 503, f"/health/ready answered {ready.status} with the database down")
    verdict.figure(f"/health/ready while down: {ready.status} in {ready.seconds * 1000:.0f} ms")
    time.sleep(max(0.0, DOWN_FOR - (time.monotonic() - stopped_at)))
    cluster.start()
    up_at = time.monotonic()

    # Service is back when a read and an upload have both succeeded after the database came back.
    resumed_at = None
    deadline = up_at + 30
    while time.monotonic() < deadline and resumed_at is None:
        with lock:
            after = [e for e in events if e[0] > up_at and e[2] == 200]
        if {e[1] for e in after} >= {"read", "upload"}:
            resumed_at = max(min(e[0] for e in after if e[1] == kind) for kind in ("read", "upload"))
        time.sleep(0.1)
    time.sleep(3)
    stop.set()
    for thread in threads:
        thread.join()

    verdict.require(server.alive, "the server process died")
    during = [e for e in events if down_at <= e[0] - e[3] <= up_at]  # requests sent while the database was down
    answered = [e for e in during if e[2] is not None]
    unavailable = [e for e in answered if e[2] == 503]
    verdict.require(all(e[2] in (200, 503) for e in answered),
                    f"unexpected statuses while down: {sorted({e[2] for e in answered})}")
    verdict.require(all(e[4] == "application/problem+json" for e in unavailable), "a 503 was not problem+json")
    unanswered = [f"{e[1]} sent {e[0] - e[3] - down_at:+.1f} s after the stop: {e[4]}" for e in during if e[2] is None]
    verdict.require(not unanswered, f"requests without an answer: {unanswered[:3]}")
    slowest = max((e[3] for e in during), default=0.0)
    verdict.require(slowest <= HANG_LIMIT, f"a request waited {slowest:.1f} s for its answer (limit {HANG_LIMIT} s)")
    verdict.figure(f"{len(during)} requests sent while down: {len(unavailable)} × 503 problem+json, "
                   f"slowest answer {slowest * 1000:.0f} ms")
    if verdict.require(resumed_at is not None, "service did not resume within 30 s of the database coming back"):
        verdict.require(resumed_at - up_at <= RESUME_LIMIT,
                        f"service resumed {resumed_at - up_at:.1f} s after the database (limit {RESUME_LIMIT} s)")
        verdict.figure(f"database stopped for {up_at - down_at:.1f} s; service answering again "
                       f"{resumed_at - up_at:.1f} s after it was back")

    lost = []
    for client in range(UPLOADERS):
        base = 1_590_000_000 + client * 10_000_000
        rows = cluster.psql(f"SELECT (extract(epoch FROM at)::bigint - {base}) / {BATCH}, count(*) FROM samples "
                            f"WHERE user_id = '{accounts[client]['id']}' GROUP BY 1")
        stored = {int(index): int(count) for index, count in rows}
        lost += [(client, i) for i in acknowledged[client] if stored.get(i) != BATCH]
        verdict.require(all(count == BATCH for count in stored.values()), f"client {client} has a partial batch")
    acked = sum(len(a) for a in acknowledged)
    verdict.require(not lost, f"acknowledged batches lost: {lost[:5]}")
    verdict.figure(f"{acked} acknowledged batches × {BATCH} samples, all present after the restart; 0 partial")
    server.stop()
    return verdict
