"""`make faults`: runs each fault scenario on a fresh database and prints PASS/FAIL with its figures.

    python3 scripts/faults/run.py D4H [scenario …]     (scenarios: crash, database, instances, hostile, burst)

The cluster comes from FAULTS_CLUSTER / FAULTS_DB_PORT / PG_SUPERUSER_PASSWORD (the Makefile sets them).
"""
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))

import crash_ingest  # noqa: E402
import database_restart  # noqa: E402
import group_burst  # noqa: E402
import hostile_clients  # noqa: E402
import two_instances  # noqa: E402
from harness import OUT, Cluster, Server, Verdict  # noqa: E402

SCENARIOS = {
    "crash": lambda d4h, cluster: crash_ingest.run(d4h, cluster, 18201),
    "database": lambda d4h, cluster: database_restart.run(d4h, cluster, 18202),
    "instances": lambda d4h, cluster: two_instances.run(d4h, cluster, (18203, 18204)),
    "hostile": lambda d4h, cluster: hostile_clients.run(d4h, cluster, 18205),
    "burst": lambda d4h, cluster: group_burst.run(d4h, cluster, (18206, 18207)),
}


def main():
    d4h = sys.argv[1]
    chosen = sys.argv[2:] or list(SCENARIOS)
    unknown = [name for name in chosen if name not in SCENARIOS]
    if unknown:
        sys.exit(f"faults: unknown scenario {unknown}; choose from {list(SCENARIOS)}")
    os.makedirs(OUT, exist_ok=True)
    cluster = Cluster(name=os.environ.get("FAULTS_CLUSTER", "faults"), port=int(os.environ.get("FAULTS_DB_PORT", "54341")),
                      password=os.environ.get("PG_SUPERUSER_PASSWORD", "d4h-dev-password"))
    verdicts = []
    for name in chosen:
        started = time.monotonic()
        cluster.start()  # a scenario may have left it stopped if it failed midway
        cluster.fresh_database(d4h)
        try:
            verdict = SCENARIOS[name](d4h, cluster)
        except Exception as error:  # a scenario that crashes is a FAIL with its traceback, not a stack dump
            verdict = Verdict(name, passed=False, problems=[f"{type(error).__name__}: {error}"])
            with open(os.path.join(OUT, f"{name}.traceback.txt"), "w") as file:
                traceback.print_exc(file=file)
        finally:
            for server in Server.started:
                server.stop()
            Server.started.clear()
        verdict.figure(f"({time.monotonic() - started:.0f} s)")
        verdict.print()
        verdicts.append(verdict)
    failed = [v.name for v in verdicts if not v.passed]
    print(f"faults: {len(verdicts) - len(failed)} of {len(verdicts)} scenarios passed"
          + (f"; FAILED: {failed}" if failed else "") + f" (server logs in {os.path.relpath(OUT)})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
