"""Two instances on one database: uploads and downloads alternate between them while both run the webhook
delivery loop. Every webhook event must reach the receiver exactly once (at-least-once delivery, and in
normal operation `FOR UPDATE SKIP LOCKED` keeps the two loops from posting one event twice), and a
subscriber following its cursor across both instances must get every sample exactly once.
"""
import hashlib
import hmac
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness import Server, Verdict, call, create_accounts, heart_rate_batch, log_in

PEOPLE = 4
BATCHES = 20
BATCH = 250
SECRET = "two-instances-webhook-secret"


class Receiver:
    """A webhook endpoint on loopback that checks signatures and counts event ids."""

    def __init__(self):
        self.ids = Counter()
        self.bad_signatures = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                parts = dict(p.split("=", 1) for p in self.headers.get("Data4Help-Signature", "").split(","))
                expected = hmac.new(SECRET.encode(), f"{parts.get('t')}.".encode() + body, hashlib.sha256).hexdigest()
                with receiver.lock:
                    if not hmac.compare_digest(expected, parts.get("v1", "")):
                        receiver.bad_signatures += 1
                    receiver.ids[json.loads(body)["id"]] += 1
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/hook"


def run(d4h, cluster, ports):
    verdict = Verdict("two instances on one database (uploads, cursors and webhooks across both)")
    servers = [Server(d4h, cluster, port, WEBHOOK_ALLOW_PRIVATE="true").start() for port in ports]
    accounts = create_accounts(d4h, cluster, users=PEOPLE, companies=1)
    people = accounts["users"]
    company = log_in(servers[0], accounts["companies"][0])
    tokens = [log_in(servers[i % 2], person) for i, person in enumerate(people)]
    receiver = Receiver()

    reply = call("PUT", servers[1].url("/v1/webhook"), token=company, body={"url": receiver.url, "secret": SECRET})
    verdict.require(reply.status in (200, 201), f"PUT /v1/webhook answered {reply.status}: {reply.body[:200]!r}")

    request_ids = []
    for i, person in enumerate(people):
        reply = call("POST", servers[i % 2].url("/v1/single-requests"), token=company,
                     body={"subject": {"email": person["email"]}, "types": ["heart_rate"], "purpose": "Two instances", "purposeCode": "HRESCH",
                           "subscription": {"days": 30}})
        request_ids.append(reply.json()["id"])
        accept = call("POST", servers[(i + 1) % 2].url(f"/v1/single-requests/{request_ids[-1]}/accept"), token=tokens[i])
        verdict.require(accept.status == 200, f"accept answered {accept.status}")

    uploaded = [set() for _ in people]
    received = [[] for _ in people]
    uploads_done = threading.Event()
    errors = []

    def upload(i):
        for batch in range(BATCHES):
            body = heart_rate_batch(1_600_000_000 + i * 10_000_000 + batch * BATCH, BATCH)
            reply = call("POST", servers[batch % 2].url("/v1/me/samples"), token=tokens[i], body=body)
            if reply.status != 200:
                errors.append(f"upload answered {reply.status}")
                return
            uploaded[i].update(s["at"] for s in body["samples"])

    def follow(i):
        cursor, turn, quiet_after_done = None, 0, 0
        while quiet_after_done < 2:
            path = f"/v1/single-requests/{request_ids[i]}/data" + (f"?cursor={cursor}" if cursor else "")
            reply = call("GET", servers[turn % 2].url(path), token=company)
            turn += 1
            finished = uploads_done.is_set()
            items = []
            if reply.status == 200:
                document = reply.json()
                items = document["items"]
                received[i].extend(item["at"] for item in items)
                cursor = document.get("nextCursor") or cursor
            elif not (reply.status == 409 and b"no-requested-data" in reply.body):
                errors.append(f"download answered {reply.status}: {reply.body[:200]!r}")
                return
            quiet_after_done = quiet_after_done + 1 if finished and not items else 0
            time.sleep(0.05)

    followers = [threading.Thread(target=follow, args=(i,), daemon=True) for i in range(PEOPLE)]
    uploaders = [threading.Thread(target=upload, args=(i,), daemon=True) for i in range(PEOPLE)]
    for thread in followers + uploaders:
        thread.start()
    for thread in uploaders:
        thread.join()
    uploads_done.set()
    for thread in followers:
        thread.join()
    verdict.require(not errors, f"errors: {errors[:3]}")

    exact = True
    for i in range(PEOPLE):
        duplicates = len(received[i]) - len(set(received[i]))
        missing = len(uploaded[i] - set(received[i]))
        exact &= verdict.require(duplicates == 0 and missing == 0,
                                 f"subscriber of person {i}: {duplicates} duplicates, {missing} missing")
    verdict.figure(f"{PEOPLE} people × {BATCHES} batches × {BATCH} samples uploaded alternately to both instances; "
                   f"cursor downloads alternating instances received {sum(len(r) for r in received)} samples, "
                   f"{'each exactly once' if exact else 'NOT exactly once'}")

    # Wait for the outbox to drain, then compare what the receiver saw with what was queued.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pending = int(cluster.psql("SELECT count(*) FROM webhook_events WHERE status = 'pending'")[0][0])
        if pending == 0:
            break
        time.sleep(0.5)
    time.sleep(1)
    queued = int(cluster.psql("SELECT count(*) FROM webhook_events")[0][0])
    by_instance = cluster.psql("SELECT count(*) FROM webhook_attempts")[0][0]
    with receiver.lock:
        delivered, twice = len(receiver.ids), [i for i, n in receiver.ids.items() if n > 1]
        bad = receiver.bad_signatures
    verdict.require(delivered == queued, f"{queued} events queued, {delivered} distinct ones received")
    verdict.require(not twice, f"{len(twice)} events delivered more than once")
    verdict.require(bad == 0, f"{bad} deliveries with a bad signature")
    verdict.figure(f"{queued} webhook events queued, {delivered} received, {len(twice)} twice, {bad} bad signatures "
                   f"({by_instance} attempts recorded)")
    receiver.http.shutdown()
    for server in servers:
        server.stop()
    return verdict
