"""What every fault scenario shares: the PostgreSQL cluster, d4h servers as child processes, plain HTTP
calls, accounts, and the PASS/FAIL report. Standard library only, so `make faults` needs nothing from PyPI.
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(REPO, "var", "faults")


@dataclass
class Cluster:
    """The project-local PostgreSQL the faults run on (scripts/pg-cluster.sh, durable: fsync on)."""

    name: str
    port: int
    password: str
    database: str = "d4h_faults"

    @property
    def admin_env(self):
        return dict(os.environ, PGPASSWORD=self.password)

    @property
    def database_url(self):
        return f"postgres://postgres:{self.password}@127.0.0.1:{self.port}/{self.database}?sslmode=disable"

    def cluster_script(self, *args):
        return subprocess.run(["bash", os.path.join(REPO, "scripts", "pg-cluster.sh"), *args],
                              check=True, capture_output=True, text=True)

    def stop(self):
        """pg_ctl stop -m fast: disconnects every client and rolls back open transactions."""
        self.cluster_script("stop", self.name)

    def start(self):
        self.cluster_script("start", self.name, str(self.port))

    def psql(self, sql, database=None):
        """Runs `sql`; returns the rows as lists of strings (unaligned, tab-separated)."""
        result = subprocess.run(
            [os.environ.get("PSQL", "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database or self.database, "-c", sql],
            check=True, capture_output=True, text=True, env=self.admin_env)
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def fresh_database(self, d4h):
        self.psql(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)", database="postgres")
        self.psql(f"CREATE DATABASE {self.database}", database="postgres")
        subprocess.run([d4h, "migrate"], check=True, capture_output=True, env=dict(os.environ, DATABASE_URL=self.database_url))


class Formation:
    """A pg_auto_failover formation of its own (scripts/pg-ha.sh): a monitor on `base_port`, node1 and node2 on the
    next two ports. The scenarios' database is `database` on whichever node is primary; servers reach it through
    libpq's multi-host URL (`database_url`), the checks through the primary's own port (`primary_url`)."""

    NODES = ("node1", "node2")

    def __init__(self, name, base_port, password, database="d4h_faults"):
        self.name, self.base_port, self.password, self.database = name, base_port, password, database

    # ---- the formation ----

    def script(self, *args, check=True, timeout=400):
        return subprocess.run(["bash", os.path.join(REPO, "scripts", "pg-ha.sh"), *args], check=check,
                              capture_output=True, text=True, timeout=timeout)

    def start(self):
        """Starts every node that is not running and waits (bounded, in pg-ha.sh) for a primary and a secondary."""
        result = self.script("start", self.name, str(self.base_port), check=False)
        if result.returncode != 0:
            raise RuntimeError(f"pg-ha.sh start {self.name} failed: {(result.stderr or result.stdout)[-1500:]}")

    def stop(self):
        self.script("stop", self.name)

    @property
    def directory(self):
        return self.script("dir", self.name).stdout.strip()

    def port_of(self, node):
        return self.base_port + {"monitor": 0, "node1": 1, "node2": 2}[node]

    def node_of(self, port):
        return {self.base_port + 1: "node1", self.base_port + 2: "node2"}[port]

    def states(self):
        """{node name: (reported state, goal state)} from the monitor."""
        rows = self.psql("SELECT nodename, reportedstate, goalstate FROM pgautofailover.node", port=self.base_port,
                         database="pg_auto_failover", timeout=5)
        return {name: (reported, goal) for name, reported, goal in rows}

    def show_state(self):
        """`pg_autoctl show state` (through pg-ha.sh status), as an operator would read it."""
        result = self.script("status", self.name, check=False, timeout=60)
        return "\n".join(line for line in result.stdout.splitlines() if not line.startswith("pg-ha:")).strip()

    def primary(self):
        """The node the monitor has as writable (primary, wait_primary or single), or None."""
        for name, (reported, goal) in self.states().items():
            if reported in ("primary", "wait_primary", "single") and goal == reported:
                return name
        return None

    def service_pid(self, node):
        directory = self.directory
        path = os.path.join(directory, "run", "pg_autoctl" + os.path.join(directory, node), "pg_autoctl.pid")
        with open(path) as file:
            return int(file.readline())

    def kill(self, node):
        """The machine is lost: SIGKILL to the node's pg_autoctl, its postgres and every postgres backend (backends
        are process-group leaders of their own, so the whole tree is collected), so that nothing is left to restart
        postgres or to finish a commit. Kills in rounds until none is left: pg_autoctl's supervisor restarts a child
        it sees die, so a child forked between a round's look at the process table and the supervisor's own kill
        (a new "start/stop postgres", which then restarted the primary) is caught by the next round. Returns the
        pids killed."""
        root = self.service_pid(node)
        pgid = os.getpgid(root)
        victims = set()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            table = [line.split() for line in subprocess.run(["ps", "-eo", "pid=,ppid=,pgid="], capture_output=True,
                                                             text=True, check=True).stdout.splitlines()]
            found = {int(pid) for pid, _, group in table if int(group) == pgid}
            grew = True
            while grew:
                more = {int(pid) for pid, parent, _ in table if int(parent) in found | victims} - found
                found |= more
                grew = bool(more)
            alive = [pid for pid in found | victims if os.path.exists(f"/proc/{pid}") and not _zombie(pid)]
            if not alive:
                return sorted(victims)
            victims |= found
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
        raise RuntimeError(f"{node}: processes {alive} survived SIGKILL for 10 s")

    # ---- SQL ----

    def url(self, port, database=None, user="postgres"):
        return f"postgres://{user}:{self.password}@127.0.0.1:{port}/{database or self.database}?sslmode=disable"

    @property
    def database_url(self):
        """What servers are given: every node, libpq picks the one that takes writes. FAULTS_HA_SINGLE_HOST=1 gives
        the current primary alone (for a server that does not take several hosts yet)."""
        if os.environ.get("FAULTS_HA_SINGLE_HOST") == "1":
            return self.url(self.port_of(self.primary() or "node1"))
        hosts = ",".join(f"127.0.0.1:{self.port_of(node)}" for node in self.NODES)
        return (f"postgres://postgres:{self.password}@{hosts}/{self.database}"
                "?sslmode=disable&target_session_attrs=read-write")

    def primary_port(self):
        primary = self.primary()
        if primary is None:
            raise RuntimeError(f"formation {self.name} has no primary: {self.states()}")
        return self.port_of(primary)

    def psql(self, sql, port=None, database=None, timeout=60):
        """Runs `sql` on `port` (default: the primary); rows as lists of strings."""
        result = subprocess.run(
            [os.environ.get("PSQL", "psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             "-h", "127.0.0.1", "-p", str(port or self.primary_port()), "-U", "postgres", "-d", database or self.database,
             "-c", sql],
            check=True, capture_output=True, text=True, timeout=timeout,
            env=dict(os.environ, PGPASSWORD=self.password, PGCONNECT_TIMEOUT="5"))
        return [line.split("\t") for line in result.stdout.splitlines() if line]

    def fresh_database(self, d4h):
        port = self.primary_port()
        self.psql(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)", port=port, database="postgres")
        self.psql(f"CREATE DATABASE {self.database}", port=port, database="postgres")
        subprocess.run([d4h, "migrate"], check=True, capture_output=True, env=dict(os.environ, DATABASE_URL=self.database_url))


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class Server:
    """One `d4h serve` child process on a loopback port. Every one started is in `Server.started`, so a
    scenario that fails midway cannot leave servers behind (run.py stops them all)."""

    started = []

    def __init__(self, d4h, cluster, port, **environment):
        self.d4h, self.cluster, self.port = d4h, cluster, port
        # Rate limits off: the scenarios upload and download as fast as they can on purpose (make test
        # covers the limits themselves).
        self.environment = {"DATABASE_URL": cluster.database_url, "MAIL_TRANSPORT": "log",
                            "LOG_LEVEL": os.environ.get("FAULTS_LOG_LEVEL", "warning"), "HTTP_HOST": "127.0.0.1",
                            "RATE_LIMIT_UPLOADS_PER_MINUTE": "0", "RATE_LIMIT_DOWNLOADS_PER_MINUTE": "0",
                            "RATE_LIMIT_GROUP_REQUESTS_PER_MINUTE": "0", "RATE_LIMIT_IMPORTS_PER_HOUR": "0",
                            **{k: str(v) for k, v in environment.items()}}
        self.process = None
        self.log_path = os.path.join(OUT, f"server-{port}.log")
        if os.path.exists(self.log_path):
            os.remove(self.log_path)  # one log per scenario run; a restart appends to it

    def start(self, ready_within=60):
        Server.started.append(self)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([self.d4h, "serve", "--http-port", str(self.port)], stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=dict(os.environ, **self.environment))
        deadline = time.monotonic() + ready_within
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"d4h serve on :{self.port} exited with {self.process.returncode}; see {self.log_path}")
            try:
                if call("GET", self.url("/health/ready"), timeout=2).status == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"d4h serve on :{self.port} not ready within {ready_within} s")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    @property
    def alive(self):
        return self.process is not None and self.process.poll() is None

    def kill(self):
        """SIGKILL: no graceful shutdown, no flushing, as in a power cut or the OOM killer."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.alive:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Reply:
    status: int
    headers: dict
    body: bytes
    seconds: float

    def json(self):
        return json.loads(self.body)


def call(method, url, token=None, body=None, content_type="application/json", timeout=30, headers=None):
    """One request on a fresh connection. Raises OSError (connection refused/reset, timeout) when no
    response arrives: the caller must treat that as "not acknowledged"."""
    parsed = url.split("/", 3)
    host, port = parsed[2].split(":")
    path = "/" + parsed[3]
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    sent_headers = dict(headers or {})
    if token:
        sent_headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        sent_headers["Content-Type"] = content_type
    started = time.monotonic()
    try:
        connection.request(method, path, body=body, headers=sent_headers)
        response = connection.getresponse()
        data = response.read()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data, time.monotonic() - started)
    except http.client.HTTPException as error:  # e.g. the connection died halfway through the response
        raise ConnectionError(f"{type(error).__name__}: {error}") from error
    finally:
        connection.close()


def d4h_dev(d4h):
    """The developers' executable beside `d4h` (benchmarks and demo seeds are not part of the product)."""
    return os.path.join(os.path.dirname(d4h), "d4h-dev")


def create_accounts(d4h, cluster, users, companies=0):
    """Activated accounts through the real registration path (`d4h-dev bench accounts`)."""
    result = subprocess.run([d4h_dev(d4h), "bench", "accounts", "--database-url", cluster.database_url, "--users", str(users),
                             "--companies", str(companies)], check=True, capture_output=True, text=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def log_in(server, account):
    reply = call("POST", server.url("/v1/sessions"), body={"email": account["email"], "password": account["password"]})
    if reply.status != 201:
        raise RuntimeError(f"login of {account['email']} answered {reply.status}: {reply.body[:200]!r}")
    return reply.json()["token"]


def heart_rate_batch(start_epoch, count, step=1):
    """`count` heart-rate samples `step` seconds apart from `start_epoch` (UTC); values identify the position."""
    samples = []
    for index in range(count):
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start_epoch + index * step))
        samples.append({"type": "heart_rate", "value": 40 + index % 150, "at": at})
    return {"samples": samples}


@dataclass
class Verdict:
    name: str
    passed: bool = True
    figures: list = field(default_factory=list)
    problems: list = field(default_factory=list)

    def figure(self, text):
        self.figures.append(text)

    def require(self, condition, problem):
        if not condition:
            self.passed = False
            self.problems.append(problem)
        return condition

    def print(self):
        print(f"{'PASS' if self.passed else 'FAIL'}  {self.name}")
        for line in self.figures:
            print(f"      {line}")
        for line in self.problems:
            print(f"      ✗ {line}")
        sys.stdout.flush()


def unique_suffix():
    return uuid.uuid4().hex[:8]


def wait_until(predicate, within, step=0.25):
    """`predicate()` once it is truthy, polled every `step` seconds for at most `within`; None if it never was."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return None
