"""Crash during ingest: clients upload 1,000-sample batches continuously; the server is SIGKILLed mid-stream
and restarted. Every batch that got a 200 must be fully stored, no batch may be partially stored, and
re-sending the batches that got no answer must store each sample exactly once.
"""
import threading
import time

from harness import Server, Verdict, call, create_accounts, heart_rate_batch, log_in

CLIENTS = 4
BATCH = 1000
RUN_BEFORE_KILL = 4.0  # seconds of uploads before the kill


def batch_start(client, index):
    # Each client owns a range of seconds in 2020; batch `index` covers the next 1,000 of them.
    return 1_580_000_000 + client * 10_000_000 + index * BATCH


def run(d4h, cluster, port):
    verdict = Verdict("crash during ingest (SIGKILL mid-stream, restart, re-send)")
    server = Server(d4h, cluster, port).start()
    accounts = create_accounts(d4h, cluster, users=CLIENTS)["users"]
    tokens = [log_in(server, account) for account in accounts]

    acknowledged = [set() for _ in range(CLIENTS)]
    unanswered = [set() for _ in range(CLIENTS)]
    rejected = []
    stop = threading.Event()

    def upload(client):
        index = 0
        while not stop.is_set():
            body = heart_rate_batch(batch_start(client, index), BATCH)
            try:
                reply = call("POST", server.url("/v1/me/samples"), token=tokens[client], body=body, timeout=10)
            except OSError:
                unanswered[client].add(index)  # the kill: no answer, so not acknowledged
                return
            if reply.status == 200 and reply.json()["accepted"] == BATCH:
                acknowledged[client].add(index)
            else:
                rejected.append((client, index, reply.status))
                return
            index += 1

    threads = [threading.Thread(target=upload, args=(client,), daemon=True) for client in range(CLIENTS)]
    for thread in threads:
        thread.start()
    time.sleep(RUN_BEFORE_KILL)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join()
    verdict.require(not rejected, f"uploads refused before the kill: {rejected[:3]}")

    server.start()
    stored = stored_batches(cluster, accounts)
    acked_total = sum(len(batches) for batches in acknowledged)
    in_flight = sum(len(batches) for batches in unanswered)
    verdict.figure(f"{CLIENTS} clients, {acked_total} batches × {BATCH} samples acknowledged before the kill, "
                   f"{in_flight} in flight when it came")
    partial = [(c, i, n) for c in range(CLIENTS) for i, n in stored[c].items() if n != BATCH]
    verdict.require(not partial, f"partially stored batches (client, batch, rows): {partial[:5]}")
    lost = [(c, i) for c in range(CLIENTS) for i in acknowledged[c] if stored[c].get(i) != BATCH]
    verdict.require(not lost, f"acknowledged batches missing after the restart: {lost[:5]}")
    committed_unanswered = sum(1 for c in range(CLIENTS) for i in unanswered[c] if stored[c].get(i) == BATCH)
    verdict.figure(f"after restart: {sum(len(s) for s in stored)} complete batches stored, 0 partial expected "
                   f"and {len(partial)} found; {committed_unanswered} of the unanswered batches had committed")

    # Re-send what got no answer: committed ones come back as duplicates, the rest are stored now.
    accepted = duplicates = 0
    for client in range(CLIENTS):
        for index in unanswered[client]:
            reply = call("POST", server.url("/v1/me/samples"), token=tokens[client],
                         body=heart_rate_batch(batch_start(client, index), BATCH))
            verdict.require(reply.status == 200, f"re-send answered {reply.status}: {reply.body[:200]!r}")
            if reply.status == 200:
                accepted += reply.json()["accepted"]
                duplicates += reply.json()["duplicates"]
    stored = stored_batches(cluster, accounts)
    expected = {c: acknowledged[c] | unanswered[c] for c in range(CLIENTS)}
    wrong = [(c, i, stored[c].get(i)) for c in range(CLIENTS) for i in expected[c] if stored[c].get(i) != BATCH]
    extra = [(c, i) for c in range(CLIENTS) for i in stored[c] if i not in expected[c]]
    verdict.require(not wrong and not extra, f"after re-sending: wrong batches {wrong[:5]}, unexpected {extra[:5]}")
    rows = int(cluster.psql("SELECT count(*) FROM samples")[0][0])
    verdict.require(rows == BATCH * sum(len(expected[c]) for c in range(CLIENTS)),
                    f"{rows} rows stored, expected {BATCH * sum(len(expected[c]) for c in range(CLIENTS))}")
    verdict.figure(f"re-sent {in_flight} batches: {accepted} samples accepted, {duplicates} duplicates; "
                   f"{rows} rows = each sample exactly once")
    server.stop()
    return verdict


def stored_batches(cluster, accounts):
    """Per client: batch index → rows stored in it."""
    stored = []
    for client, account in enumerate(accounts):
        base = batch_start(client, 0)
        rows = cluster.psql(
            f"SELECT (extract(epoch FROM at)::bigint - {base}) / {BATCH}, count(*) FROM samples "
            f"WHERE user_id = '{account['id']}' GROUP BY 1")
        stored.append({int(index): int(count) for index, count in rows})
    return stored
