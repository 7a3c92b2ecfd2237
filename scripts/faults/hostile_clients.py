"""Hostile clients: thousands of idle connections, slow-drip request bodies, oversized headers and deeply
nested JSON, all at once, while a well-behaved client keeps calling. The well-behaved client must keep
getting answers, and each attack must meet its documented limit:

- idle connections are closed after HTTP_IDLE_TIMEOUT (set to 5 s here; 60 s by default);
- a body that arrives slower than 1 KiB/s after 30 s is refused with 408 and the connection closed;
- request headers over 80 KiB are refused (400) by the HTTP parser before any handler runs;
- JSON nested deeper than the decoder's limit is refused with 400, quickly.
"""
import resource
import socket
import threading
import time

from harness import Server, Verdict, call, create_accounts, log_in

IDLE_CONNECTIONS = 3000
SLOW_DRIPPERS = 20
IDLE_TIMEOUT = 5


def run(d4h, cluster, port):
    verdict = Verdict(f"hostile clients ({IDLE_CONNECTIONS} idle connections, {SLOW_DRIPPERS} slow-drip bodies, "
                      "oversized headers, deeply nested JSON)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, IDLE_CONNECTIONS + 1000)), hard))
    server = Server(d4h, cluster, port, HTTP_IDLE_TIMEOUT=IDLE_TIMEOUT).start()
    account = create_accounts(d4h, cluster, users=1)["users"][0]
    token = log_in(server, account)

    # The well-behaved client: an authenticated read every 100 ms for the whole scenario.
    latencies, failures = [], []
    stop = threading.Event()

    def behave():
        while not stop.is_set():
            try:
                reply = call("GET", server.url("/v1/me"), token=token, timeout=10)
                latencies.append(reply.seconds)
                if reply.status != 200:
                    failures.append(reply.status)
            except OSError as error:
                failures.append(str(error))
            time.sleep(0.1)

    good = threading.Thread(target=behave, daemon=True)
    good.start()

    # 1. Idle connections: opened, never written to.
    idle = []
    for _ in range(IDLE_CONNECTIONS):
        try:
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError as error:
            verdict.require(False, f"could only open {len(idle)} idle connections: {error}")
            break
    verdict.figure(f"{len(idle)} idle connections open")

    # 2. Slow drip: a 100 KB upload declared, then one byte a second.
    drips, drip_outcomes = [], []

    def drip():
        connection = socket.create_connection(("127.0.0.1", port), timeout=60)
        head = (f"POST /v1/me/samples HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        connection.sendall(head.encode())
        started = time.monotonic()
        answer = b""
        try:
            for _ in range(120):
                connection.sendall(b" ")
                connection.settimeout(1.0)
                try:
                    chunk = connection.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                    if b"\r\n\r\n" in answer:
                        break
                except socket.timeout:
                    pass
        except OSError:
            pass  # the server closed the connection
        drip_outcomes.append((answer.split(b"\r\n", 1)[0].decode(errors="replace"), time.monotonic() - started))
        connection.close()

    for _ in range(SLOW_DRIPPERS):
        thread = threading.Thread(target=drip, daemon=True)
        thread.start()
        drips.append(thread)

    # 3. Oversized headers: one 200 KiB header.
    reply_line, seconds = raw_request(port, "GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      f"X-Padding: {'a' * 200 * 1024}\r\n\r\n")
    verdict.require(reply_line.startswith("HTTP/1.1 431") or reply_line.startswith("HTTP/1.1 400") or reply_line == "",
                    f"a 200 KiB header was answered {reply_line!r}")
    verdict.figure(f"200 KiB header: {reply_line or 'connection closed'} after {seconds * 1000:.0f} ms")

    # 4. Deeply nested JSON: 100,000 open brackets inside the samples array.
    nested = b'{"samples":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    start = time.monotonic()
    reply = call("POST", server.url("/v1/me/samples"), token=token, body=nested, timeout=30)
    verdict.require(reply.status in (400, 422), f"deeply nested JSON answered {reply.status}")
    verdict.figure(f"JSON nested 100,000 deep: {reply.status} {reply.headers.get('content-type')} "
                   f"in {(time.monotonic() - start) * 1000:.0f} ms")

    # Idle connections must be closed by the server after its idle timeout.
    time.sleep(IDLE_TIMEOUT + 3)
    closed = 0
    for connection in idle:
        connection.settimeout(0.01)
        try:
            closed += connection.recv(1) == b""
        except socket.timeout:
            pass
        except OSError:
            closed += 1
        connection.close()
    verdict.require(closed >= len(idle) * 0.99, f"only {closed} of {len(idle)} idle connections were closed")
    verdict.figure(f"{closed} of {len(idle)} idle connections closed by the server after its {IDLE_TIMEOUT} s idle timeout")

    for thread in drips:
        thread.join()
    statuses = sorted({outcome for outcome, _ in drip_outcomes})
    slowest = max(seconds for _, seconds in drip_outcomes)
    verdict.require(all(o.startswith("HTTP/1.1 408") or o == "" for o, _ in drip_outcomes),
                    f"slow-drip bodies were answered {statuses}")
    verdict.require(slowest < 60, f"a slow-drip body was held for {slowest:.0f} s")
    verdict.figure(f"{SLOW_DRIPPERS} slow-drip bodies (1 byte/s): {statuses} after at most {slowest:.0f} s")

    stop.set()
    good.join()
    latencies.sort()
    p99 = latencies[int(len(latencies) * 0.99)] if latencies else float("inf")
    verdict.require(not failures, f"the well-behaved client failed: {failures[:3]}")
    verdict.require(p99 < 1.0, f"the well-behaved client's p99 was {p99 * 1000:.0f} ms")
    verdict.figure(f"well-behaved client meanwhile: {len(latencies)} calls, {len(failures)} failures, "
                   f"p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {latencies[-1] * 1000:.1f} ms")
    verdict.require(server.alive, "the server process died")
    server.stop()
    return verdict


def raw_request(port, text):
    """Sends `text` on a new connection; returns the status line (or "" if the server closed) and the time."""
    started = time.monotonic()
    connection = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        connection.sendall(text.encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = connection.recv(4096)
            if not chunk:
                break
            answer += chunk
    except OSError:
        answer = b""
    finally:
        connection.close()
    return answer.split(b"\r\n", 1)[0].decode(errors="replace"), time.monotonic() - started
