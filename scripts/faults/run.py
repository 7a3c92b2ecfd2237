"""`make faults`: runs each fault scenario on a fresh database and prints PASS/FAIL with its figures.

    python3 scripts/faults/run.py D4H [scenario …]
        (scenarios: crash, database, instances, hostile, burst on the single cluster;
         failover, monitor-lost, secondary-lost, read-replica, sync-wait-cut on a pg_auto_failover formation)

The cluster comes from FAULTS_CLUSTER / FAULTS_DB_PORT / PG_SUPERUSER_PASSWORD (the Makefile sets them), the
formation from FAULTS_HA_FORMATION / FAULTS_HA_BASE_PORT (scripts/pg-ha.sh; started here when a scenario needs it).
"""
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(__file__))

import crash_ingest  # noqa: E402
import database_restart  # noqa: E402
import failover  # noqa: E402
import group_burst  # noqa: E402
import hostile_clients  # noqa: E402
import read_replica  # noqa: E402
import two_instances  # noqa: E402
from harness import OUT, Cluster, Formation, Server, Verdict  # noqa: E402

SCENARIOS = {
    "crash": lambda d4h, cluster: crash_ingest.run(d4h, cluster, 18201),
    "database": lambda d4h, cluster: database_restart.run(d4h, cluster, 18202),
    "instances": lambda d4h, cluster: two_instances.run(d4h, cluster, (18203, 18204)),
    "hostile": lambda d4h, cluster: hostile_clients.run(d4h, cluster, 18205),
    "burst": lambda d4h, cluster: group_burst.run(d4h, cluster, (18206, 18207)),
    # On the formation instead of the cluster (issue 34).
    "failover": lambda d4h, formation: failover.run_failover(d4h, formation, (18208, 18209)),
    "monitor-lost": lambda d4h, formation: failover.run_monitor_lost(d4h, formation, (18210, 18211)),
    "secondary-lost": lambda d4h, formation: failover.run_secondary_lost(d4h, formation, (18212, 18213)),
    "read-replica": lambda d4h, formation: read_replica.run(d4h, formation, (18214, 18215)),
    "sync-wait-cut": lambda d4h, formation: failover.run_sync_wait_cut(d4h, formation, (18216, 18217)),
}
ON_FORMATION = {"failover", "monitor-lost", "secondary-lost", "read-replica", "sync-wait-cut"}


def main():
    d4h = sys.argv[1]
    chosen = sys.argv[2:] or list(SCENARIOS)
    unknown = [name for name in chosen if name not in SCENARIOS]
    if unknown:
        sys.exit(f"faults: unknown scenario {unknown}; choose from {list(SCENARIOS)}")
    os.makedirs(OUT, exist_ok=True)
    cluster = Cluster(name=os.environ.get("FAULTS_CLUSTER", "faults"), port=int(os.environ.get("FAULTS_DB_PORT", "54341")),
                      password=os.environ.get("PG_SUPERUSER_PASSWORD", "d4h-dev-password"))
    formation = Formation(name=os.environ.get("FAULTS_HA_FORMATION", "faults-ha"),
                          base_port=int(os.environ.get("FAULTS_HA_BASE_PORT", "54371")),
                          password=os.environ.get("PG_SUPERUSER_PASSWORD", "d4h-dev-password"))
    verdicts = []
    for name in chosen:
        started = time.monotonic()
        try:
            # A scenario may have left its database stopped (or a node killed) if it failed midway.
            if name in ON_FORMATION:
                database = formation
                formation.start()
            else:
                database = cluster
                cluster.start()
            database.fresh_database(d4h)
            verdict = SCENARIOS[name](d4h, database)
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
