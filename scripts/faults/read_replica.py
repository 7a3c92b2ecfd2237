"""Reads from a standby (issue 34, part 5): a group request's first evaluation reads its cohort and cells from
DATABASE_READ_URL's standby while ReplicaStaleness says its data is at most DATABASE_READ_MAX_STALENESS old; the
caps, the ledger, the debits and the request's rows stay on the primary, and a withdrawal of consent the standby
has not replayed yet sends the evaluation back to the primary. The Swift tests pose the primary as the standby;
this runs it against the formation's real secondary (scripts/pg-ha.sh), whose replay is paused by hand
(pg_wal_replay_pause) to make the lag.

  read-replica  two servers on the formation's multi-host URL with DATABASE_READ_URL = the secondary alone
                (target_session_attrs=standby), one with DATABASE_READ_MAX_STALENESS = 2 s and one with 30 s;
                GROUP_MIN_COHORT = 5 over 40 people with three days of heart rate. Who did the cohort and cells
                work is read from pg_stat_statements on each node (calls of the cohort and cells statements,
                counted on the node that ran them).
     1 standby read     a group request is accepted; the standby ran its cohort and cells statements, the
                        primary none; its group_requests row, ledger entries and access-log rows are on the primary.
     2 staleness bound  replay paused on the standby, a write on the primary, the 2 s bound waited out: the 2 s
                        server's request is evaluated on the primary (the standby's counts do not move); replay
                        resumed: it logs "reads go to the standby" and its next request is read there. It must also
                        have logged "reads go to the primary" while replay was paused (2c: the operator's view).
     4 downloads        a person with DOWNLOAD_SAMPLES heart rates accepts a single request: its CSV download (several
                        chunks) is read on the standby (the chunk statement's calls there), complete; then replay paused,
                        DOWNLOAD_NEW more uploaded, and the next download from the cursor, on the 30 s server (standby still
                        within its bound, but behind the plan's position) reads every chunk on the primary and holds
                        exactly the new samples.
     5 peer statistics  a person's statistics page over the last three months publishes the horizon's closed months
                        (background publishing is off): their exact cells (the peer cell statement's calls) are read on
                        the standby, and the months, their cells and ledger entries are stored on the primary.
     3 consent lag      replay paused, a cohort member blocks the company (committed on the primary, not visible
                        on the standby); a request on the 30 s server (standby still within its bound) must be
                        accepted without that person: the standby was read first, the consent versions differed
                        under the ledger lock, and the evaluation was done again on the primary. Then replay is
                        resumed, and once the standby holds the block a request read there leaves them out too.
"""
import datetime
import os
import re
import time

from harness import OUT, Server, Verdict, call, create_accounts, heart_rate_batch, log_in, wait_until

PEOPLE = 40  # a cohort of 40 against k = 5: the noisy count (σ ≈ 7 at ρ 0.01) is never below k
K = 5
DAYS = 3
EVERY = 600  # seconds between two samples of a person: 144 a day
SHORT_BOUND = 2  # seconds (DATABASE_READ_MAX_STALENESS of the first server)
LONG_BOUND = 30  # seconds (the second server's: it still reads the paused standby in check 3)
NOTICE_WITHIN = 15  # seconds for a server to log that reads moved
REPLAY_WITHIN = 30  # seconds for the standby to replay what it was sent
REQUEST_TIMEOUT = 60
DOWNLOAD_SAMPLES = 25_000  # three chunks of a download (10,000 samples each)
DOWNLOAD_NEW = 10

# pg_stat_statements on one node: calls of a download's chunk statement (`ReleasedChunkStatement`, prepared).
CHUNKS = """
SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = current_database() AND query LIKE 'SELECT array_agg(type), array_agg(at), array_agg(value)%'
"""

# pg_stat_statements on one node, for the scenario's database: calls of the cohort statement (GroupCohortStore,
# the only one with a jsonb_array_elements over daily_rollups), of the cells statement (CellAggregateStore's
# per_person CTE over the cohort's person numbers; peer statistics have a per_person CTE too, and are off on these
# servers) and of the consent-version read, excluding this very query (whose text names them).
STATEMENTS = """
SELECT coalesce(sum(calls) FILTER (WHERE query LIKE '%jsonb_array_elements%daily_rollups%'), 0),
       coalesce(sum(calls) FILTER (WHERE query LIKE '%WITH per_person AS%person_number = ANY%'), 0),
       coalesce(sum(calls) FILTER (WHERE query LIKE 'SELECT version FROM consent_version%'), 0),
       coalesce(sum(rows) FILTER (WHERE query LIKE '%jsonb_array_elements%daily_rollups%'
                                     OR query LIKE '%WITH per_person AS%person_number = ANY%'), 0)
FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = current_database() AND query NOT LIKE '%pg_stat_statements%'
"""


class Work:
    """Cohort, cells and consent-version statement counts on one node, as a difference between two looks."""

    def __init__(self, formation, port):
        self.formation, self.port = formation, port

    def look(self):
        return tuple(int(x) for x in self.formation.psql(STATEMENTS, port=self.port)[0])

    @staticmethod
    def delta(before, after):
        return tuple(b - a for a, b in zip(before, after))

    @staticmethod
    def describe(delta):
        return f"cohort {delta[0]}, cells {delta[1]}, consent-version reads {delta[2]} ({delta[3]} rows returned)"


def notices(server):
    """The server's "reads go to …" lines, in order."""
    with open(server.log_path, errors="replace") as file:
        return [line.strip() for line in file if "reads go to the" in line]


def log_lines(server, text):
    with open(server.log_path, errors="replace") as file:
        return [line.strip() for line in file if text in line]


def where(line):
    return "standby" if "reads go to the standby" in line else "primary"


def staleness_of(line):
    found = re.search(r"database\.read_staleness=(\S+)", line)
    return found.group(1) if found else "?"


def wait_notice(server, since, wanted, within=NOTICE_WITHIN):
    """Waits for the server's `since`-th and later notices to include one saying reads go to `wanted`."""
    found = wait_until(lambda: [line for line in notices(server)[since:] if where(line) == wanted], within=within)
    return found[-1] if found else None


def window():
    today = datetime.datetime.now(datetime.timezone.utc).date()
    first = today - datetime.timedelta(days=DAYS + 1)
    return first, first + datetime.timedelta(days=DAYS - 1)


def group_body(label):
    first, last = window()
    return {"types": ["heart_rate"], "filters": [{"type": "heart_rate"}], "window": {"from": first.isoformat(), "to": last.isoformat()},
            "bucket": "day", "purpose": f"Read replica drill: {label}", "purposeCode": "HRESCH"}


def ask(server, company, label):
    reply = call("POST", server.url("/v1/group-requests"), token=company, body=group_body(label), timeout=REQUEST_TIMEOUT)
    document = reply.json() if reply.status == 201 else {}
    return reply, document


def stored(formation, request, port):
    """(status, cohort as a list of person numbers, ledger entries, access-log rows) of a request on a node."""
    rows = formation.psql(f"SELECT status, coalesce(array_to_string(cohort, ','), ''), "
                          f"(SELECT count(*) FROM privacy_ledger WHERE request_id = g.id), "
                          f"(SELECT count(*) FROM access_log WHERE request_id = g.id) "
                          f"FROM group_requests g WHERE id = '{request}'", port=port)
    if not rows:
        return None
    status, cohort, ledger, access = rows[0]
    return status, [int(n) for n in cohort.split(",") if n], int(ledger), int(access)


def replay_paused(formation, port):
    return formation.psql("SELECT pg_get_wal_replay_pause_state()", port=port)[0][0] == "paused"


def pause(formation, port):
    formation.psql("SELECT pg_wal_replay_pause()", port=port)
    return wait_until(lambda: replay_paused(formation, port), within=10)


def resume(formation, port):
    formation.psql("SELECT pg_wal_replay_resume()", port=port)
    return wait_until(lambda: formation.psql("SELECT pg_get_wal_replay_pause_state()", port=port)[0][0] == "not paused", within=10)


def replay_gap(formation, primary_port, standby_port):
    """Bytes of WAL the standby has received but not replayed, and of WAL written on the primary it has not replayed."""
    current = formation.psql("SELECT pg_current_wal_lsn()", port=primary_port)[0][0]
    received, replayed = formation.psql("SELECT pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()", port=standby_port)[0]
    gap = formation.psql(f"SELECT '{received}'::pg_lsn - '{replayed}'::pg_lsn, '{current}'::pg_lsn - '{replayed}'::pg_lsn",
                         port=standby_port)[0]
    return int(float(gap[0])), int(float(gap[1]))


def run(d4h, formation, ports):
    verdict = Verdict("read-replica: group evaluations read a real standby within DATABASE_READ_MAX_STALENESS; "
                      "the ledger and consent stay on the primary")
    primary = formation.primary()
    secondary = "node2" if primary == "node1" else "node1"
    primary_port, standby_port = formation.port_of(primary), formation.port_of(secondary)
    on_primary, on_standby = Work(formation, primary_port), Work(formation, standby_port)

    # pg_autoctl preloads pg_stat_statements; its view comes with the extension, created on the primary and
    # replicated to the standby like any other object.
    formation.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", port=primary_port)
    verdict.require(wait_until(lambda: formation.psql("SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'",
                                                      port=standby_port)[0][0] == "1", within=REPLAY_WITHIN),
                    "pg_stat_statements not on the standby within 30 s")

    read_url = formation.url(standby_port) + "&target_session_attrs=standby"
    common = {"DATABASE_READ_URL": read_url, "GROUP_MIN_COHORT": K, "LOG_LEVEL": "info", "PEER_STATISTICS_INTERVAL": 0}
    short = Server(d4h, formation, ports[0], DATABASE_READ_MAX_STALENESS=SHORT_BOUND, **common).start()
    long = Server(d4h, formation, ports[1], DATABASE_READ_MAX_STALENESS=LONG_BOUND, **common).start()
    verdict.figure(f"formation {formation.name}: primary {primary} :{primary_port}, standby {secondary} :{standby_port}; servers "
                   f":{short.port} (DATABASE_READ_MAX_STALENESS={SHORT_BOUND}) and :{long.port} ({LONG_BOUND}), DATABASE_URL "
                   f"{formation.database_url.split('@')[1]}, DATABASE_READ_URL {read_url.split('@')[1]}, GROUP_MIN_COHORT={K}")
    for server in (short, long):
        line = wait_notice(server, 0, "standby")
        verdict.require(line, f":{server.port} never logged \"reads go to the standby\" within {NOTICE_WITHIN} s of starting: "
                              f"{notices(server)}")

    # ---- the population: PEOPLE people with DAYS days of heart rate, one company ----
    accounts = create_accounts(d4h, formation, users=PEOPLE, companies=1)
    people, company_account = accounts["users"], accounts["companies"][0]
    tokens = [log_in(short, person) for person in people]
    company = log_in(short, company_account)
    first, last = window()
    start = int(datetime.datetime.combine(first, datetime.time(), tzinfo=datetime.timezone.utc).timestamp())
    count = DAYS * 86_400 // EVERY
    for person, token in enumerate(tokens):
        reply = call("POST", short.url("/v1/me/samples"), token=token, body=heart_rate_batch(start + person, count, step=EVERY))
        if reply.status != 200 or reply.json().get("accepted") != count:
            raise RuntimeError(f"upload for person {person} answered {reply.status}: {reply.body[:200]!r}")
    rollups = "SELECT count(*) FROM daily_rollups"
    replicated = wait_until(lambda: formation.psql(rollups, port=standby_port) == formation.psql(rollups, port=primary_port),
                            within=REPLAY_WITHIN)
    verdict.require(replicated, "the standby did not replay the uploads within 30 s")
    verdict.figure(f"population: {PEOPLE} people × {count} heart-rate samples ({first} – {last}, one every {EVERY // 60} min) "
                   f"uploaded through :{short.port}, {formation.psql(rollups, port=standby_port)[0][0]} daily rollups on the "
                   f"standby; 1 company; each request: heart rate, {DAYS} daily cells, ρ 0.04")

    try:
        check_standby_read(verdict, formation, short, company, on_primary, on_standby, primary_port)
        check_staleness_bound(verdict, formation, short, long, company, tokens, on_primary, on_standby, primary_port, standby_port, start)
        check_consent_lag(verdict, formation, long, company, company_account, people, tokens, on_primary, on_standby,
                          primary_port, standby_port)
        check_downloads(verdict, formation, long, company, people, tokens, primary_port, standby_port, start)
        check_peer_publishing(verdict, formation, short, tokens, primary_port, standby_port)
    finally:
        # Never leave the formation's standby paused for the next scenario.
        if replay_paused(formation, standby_port):
            resume(formation, standby_port)

    for server in (short, long):
        verdict.require(server.alive, f"server :{server.port} died")
        failed = log_lines(server, "read on the standby failed")
        verdict.require(not failed, f":{server.port} logged failed standby reads: {failed[:2]}")
        verdict.figure(f":{server.port} notices: " + "; ".join(f"{where(line)} (staleness {staleness_of(line)})" for line in notices(server)))
        server.stop()
    return verdict


def one_request(verdict, formation, server, company, label, on_primary, on_standby, primary_port):
    """Sends a group request; returns (request id or None, stored row, work on the primary, work on the standby)."""
    before_p, before_s = on_primary.look(), on_standby.look()
    reply, document = ask(server, company, label)
    primary_work = Work.delta(before_p, on_primary.look())
    standby_work = Work.delta(before_s, on_standby.look())
    accepted = verdict.require(reply.status == 201 and document.get("status") == "accepted",
                               f"{label}: answered {reply.status} {document.get('status')} {document.get('refusalReason')} "
                               f"{reply.body[:200]!r}")
    row = stored(formation, document["id"], primary_port) if accepted else None
    return (document.get("id") if accepted else None), row, primary_work, standby_work, reply.seconds


def check_standby_read(verdict, formation, server, company, on_primary, on_standby, primary_port):
    # What an idle standby does meanwhile (the servers' staleness probes, no evaluation), over about as long.
    idle_before = on_standby.look()
    time.sleep(2)
    idle = Work.delta(idle_before, on_standby.look())
    request, row, primary_work, standby_work, seconds = one_request(
        verdict, formation, server, company, "standby read", on_primary, on_standby, primary_port)
    ok = (request is not None and standby_work[0] >= 1 and standby_work[1] >= 1 and primary_work[0] == 0 and primary_work[1] == 0
          and row is not None and row[0] == "accepted" and len(row[1]) > 0 and row[2] >= 2 and row[3] == len(row[1]))
    verdict.require(ok, f"check 1: the evaluation did not read the standby alone: standby {Work.describe(standby_work)}, "
                        f"primary {Work.describe(primary_work)}, stored {row and (row[0], len(row[1]), row[2], row[3])}")
    verdict.figure(f"{'PASS' if ok else 'FAIL'} 1 standby read: request accepted in {seconds:.2f} s via :{server.port}; standby ran "
                   f"{Work.describe(standby_work)} (idle 2 s before: {Work.describe(idle)}); primary ran {Work.describe(primary_work)}; "
                   f"on the primary: group_requests row {row[0] if row else '—'} with a cohort of {len(row[1]) if row else 0}, "
                   f"{row[2] if row else 0} privacy_ledger entries, {row[3] if row else 0} access_log rows")
    return row


def check_staleness_bound(verdict, formation, short, long, company, tokens, on_primary, on_standby, primary_port, standby_port, start):
    seen_short, seen_long = len(notices(short)), len(notices(long))
    verdict.require(pause(formation, standby_port), "check 2: replay on the standby not paused within 10 s")
    paused_at = time.monotonic()
    # A write on the primary the standby receives but does not replay: a heart-rate batch outside every window.
    reply = call("POST", short.url("/v1/me/samples"), token=tokens[0], body=heart_rate_batch(start - 86_400, 10, step=60))
    verdict.require(reply.status == 200, f"check 2: the write on the primary answered {reply.status}")
    written_at = time.monotonic()
    # The last mark at or below the standby's replay position was taken at most a measuring interval before the
    # write: from SHORT_BOUND + 1 s after it, the standby is older than the bound whatever the server logs.
    time.sleep(SHORT_BOUND + 2)
    unreplayed, behind = replay_gap(formation, primary_port, standby_port)
    request, row, primary_work, standby_work, seconds = one_request(
        verdict, formation, short, company, "standby beyond the bound", on_primary, on_standby, primary_port)
    ok_primary = (request is not None and standby_work[0] == 0 and standby_work[1] == 0 and primary_work[0] >= 1 and primary_work[1] >= 1)
    verdict.require(ok_primary, f"check 2a: with replay paused the evaluation did not read the primary alone: "
                                f"standby {Work.describe(standby_work)}, primary {Work.describe(primary_work)}")
    verdict.figure(f"{'PASS' if ok_primary else 'FAIL'} 2a beyond the bound: replay paused, one upload on the primary, "
                   f"{time.monotonic() - written_at - seconds:.1f} s later (bound {SHORT_BOUND} s; standby {behind} bytes of WAL "
                   f"behind, {unreplayed} received and not replayed) a request on :{short.port} accepted in {seconds:.2f} s: "
                   f"primary ran {Work.describe(primary_work)}, standby {Work.describe(standby_work)}")
    moved = [line for line in notices(short)[seen_short:] if where(line) == "primary"]
    still = [line for line in notices(long)[seen_long:] if where(line) == "primary"]

    seen_short = len(notices(short))
    resumed_at = time.monotonic()
    verdict.require(resume(formation, standby_port), "check 2: replay on the standby not resumed within 10 s")
    back = wait_notice(short, seen_short, "standby")
    back_after = time.monotonic() - resumed_at
    request, row, primary_work, standby_work, seconds = one_request(
        verdict, formation, short, company, "standby within the bound again", on_primary, on_standby, primary_port)
    ok_back = (back is not None and request is not None and standby_work[0] >= 1 and standby_work[1] >= 1
               and primary_work[0] == 0 and primary_work[1] == 0)
    verdict.require(ok_back, f"check 2b: after the resume the evaluation did not read the standby: notice {back!r}, "
                             f"standby {Work.describe(standby_work)}, primary {Work.describe(primary_work)}")
    verdict.figure(f"{'PASS' if ok_back else 'FAIL'} 2b back within the bound: replay resumed {time.monotonic() - paused_at:.1f} s "
                   f"after the pause; :{short.port} logged \"reads go to the standby\" {back_after:.1f} s later (staleness "
                   f"{staleness_of(back) if back else '—'}); its request accepted in {seconds:.2f} s: standby ran "
                   f"{Work.describe(standby_work)}, primary {Work.describe(primary_work)}")

    # The operator's view: the move to the primary in 2a must be in the log, as the move back is.
    verdict.require(moved, f"check 2c: :{short.port} read the primary in 2a (standby beyond its {SHORT_BOUND} s bound) but never "
                           f"logged \"reads go to the primary\"; its notices meanwhile: {[where(line) for line in notices(short)]}")
    verdict.figure(f"{'PASS' if moved else 'FAIL'} 2c the log: :{short.port} logged \"reads go to the primary\" "
                   f"{len(moved)} time(s) while replay was paused, \"reads go to the standby\" after the resume: "
                   f"{'yes' if back else 'no'}; :{long.port} (bound {LONG_BOUND} s) logged \"reads go to the primary\" {len(still)} time(s)")


def check_consent_lag(verdict, formation, server, company, company_account, people, tokens, on_primary, on_standby, primary_port,
                      standby_port):
    # The blocker: a member of the cohort so far (every request above had everyone with heart rate).
    blocker = len(people) // 2
    account = people[blocker]["id"]
    number = int(formation.psql(f"SELECT person_number FROM users WHERE account_id = '{account}'", port=primary_port)[0][0])
    latest = formation.psql("SELECT coalesce(array_to_string(cohort, ','), '') FROM group_requests WHERE status = 'accepted' "
                            "ORDER BY created_at DESC LIMIT 1", port=primary_port)
    was_member = bool(latest) and str(number) in latest[0][0].split(",")
    verdict.require(was_member, f"check 3: person number {number} was not in the previous cohort, the check would prove nothing")
    seen = len(notices(server))
    consent = "SELECT version FROM consent_version"
    blocks = f"SELECT count(*) FROM blocks WHERE user_id = '{account}' AND third_party_id = '{company_account['id']}'"

    verdict.require(pause(formation, standby_port), "check 3: replay on the standby not paused within 10 s")
    paused_at = time.monotonic()
    reply = call("PUT", server.url(f"/v1/me/blocks/{company_account['id']}"), token=tokens[blocker])
    verdict.require(reply.status == 200, f"check 3: the block answered {reply.status}: {reply.body[:200]!r}")
    on_p = (formation.psql(blocks, port=primary_port)[0][0], formation.psql(consent, port=primary_port)[0][0])
    on_s = (formation.psql(blocks, port=standby_port)[0][0], formation.psql(consent, port=standby_port)[0][0])
    lag_visible = on_p[0] == "1" and on_s[0] == "0" and on_p[1] != on_s[1]
    verdict.require(lag_visible, f"check 3: the block is not committed on the primary and invisible on the standby: "
                                 f"primary blocks {on_p[0]} consent_version {on_p[1]}, standby {on_s[0]} / {on_s[1]}")
    request, row, primary_work, standby_work, seconds = one_request(
        verdict, formation, server, company, "consent withdrawn, not replayed", on_primary, on_standby, primary_port)
    request_after = time.monotonic() - paused_at
    moved = [line for line in notices(server)[seen:] if where(line) == "primary"]
    unreplayed, behind = replay_gap(formation, primary_port, standby_port)
    standby_blocks_then = formation.psql(blocks, port=standby_port)[0][0]
    left_out = row is not None and number not in row[1] and len(row[1]) > 0
    read_standby_first = standby_work[0] >= 1 and primary_work[0] >= 1
    ok = request is not None and left_out and read_standby_first and not moved and standby_blocks_then == "0"
    verdict.require(left_out, f"check 3: person number {number} blocked the company and is in the stored cohort "
                              f"{row[1] if row else None} (server log {server.log_path})")
    verdict.require(read_standby_first, f"check 3: the evaluation was not read on the standby, then again on the primary: standby "
                                        f"{Work.describe(standby_work)}, primary {Work.describe(primary_work)}; notices since the pause {moved}")
    verdict.require(not moved, f"check 3: :{server.port} moved reads to the primary during the check: {moved}")
    verdict.figure(f"{'PASS' if ok else 'FAIL'} 3 consent across lag: replay paused; person {blocker} (person_number {number}, "
                   f"in the previous cohort: {was_member}) blocked the company: primary blocks={on_p[0]} consent_version={on_p[1]}, "
                   f"standby blocks={on_s[0]} consent_version={on_s[1]}; a request on :{server.port} {request_after:.1f} s after "
                   f"the pause (standby {behind} bytes behind, {unreplayed} received and not replayed, still blocks="
                   f"{standby_blocks_then} there) accepted in {seconds:.2f} s with a cohort of {len(row[1]) if row else 0} "
                   f"{'without' if left_out else 'WITH'} {number}; standby ran {Work.describe(standby_work)}, then the primary "
                   f"{Work.describe(primary_work)} (the evaluation done again there)")

    resumed = resume(formation, standby_port)
    caught_up = resumed and wait_until(lambda: formation.psql(blocks, port=standby_port)[0][0] == "1", within=REPLAY_WITHIN)
    verdict.require(caught_up, "check 3: the standby did not replay the block within 30 s of the resume")
    request, row, primary_work, standby_work, seconds = one_request(
        verdict, formation, server, company, "consent withdrawn, replayed", on_primary, on_standby, primary_port)
    ok_after = (request is not None and row is not None and number not in row[1] and len(row[1]) > 0
                and standby_work[0] >= 1 and primary_work[0] == 0 and primary_work[1] == 0)
    verdict.require(ok_after, f"check 3b: once replayed: cohort {row[1] if row else None}, standby {Work.describe(standby_work)}, "
                              f"primary {Work.describe(primary_work)}")
    verdict.figure(f"{'PASS' if ok_after else 'FAIL'} 3b after the resume the standby holds the block; a request read there alone "
                   f"(standby ran {Work.describe(standby_work)}, primary {Work.describe(primary_work)}) is accepted with a cohort of "
                   f"{len(row[1]) if row else 0} without {number}")
    if not ok:
        with open(os.path.join(OUT, "read-replica-consent.txt"), "w") as file:
            file.write(f"blocker person_number {number}, account {account}\nstored cohort {row}\n")

# ... and of a peer month's exact-cell statement (PeerCellStore.perPerson: rollups joined to users, no cohort).
PEER_CELLS = """
SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
WHERE d.datname = current_database() AND query LIKE '%WITH per_person AS%JOIN users u ON u.account_id = r.user_id%'
  AND query NOT LIKE '%pg_stat_statements%'
"""


def chunk_calls(formation, port):
    return int(formation.psql(CHUNKS, port=port)[0][0])


def check_downloads(verdict, formation, server, company, people, tokens, primary_port, standby_port, start):
    person = 2
    account = people[person]
    # Well before every group window, so no evaluation above or below counts them.
    first = start - 40 * 86_400
    for offset in range(0, DOWNLOAD_SAMPLES, 5_000):
        reply = call("POST", server.url("/v1/me/samples"), token=tokens[person], body=heart_rate_batch(first + offset * 60, 5_000, step=60))
        verdict.require(reply.status == 200, f"check 4: an upload answered {reply.status}: {reply.body[:200]!r}")
    created = call("POST", server.url("/v1/single-requests"), token=company,
                   body={"subject": {"email": account["email"]}, "types": ["heart_rate"], "purpose": "Read replica drill: download",
                         "purposeCode": "HRESCH", "subscription": {"days": 30}})
    verdict.require(created.status == 201, f"check 4: the single request answered {created.status}: {created.body[:200]!r}")
    request = created.json()["id"]
    accepted = call("POST", server.url(f"/v1/single-requests/{request}/accept"), token=tokens[person])
    verdict.require(accepted.status == 200, f"check 4: the accept answered {accepted.status}: {accepted.body[:200]!r}")
    count = f"SELECT count(*) FROM samples WHERE user_id = '{account['id']}' AND type = 1"
    expected = int(formation.psql(count, port=primary_port)[0][0])
    verdict.require(wait_until(lambda: formation.psql(count, port=standby_port)[0][0] == str(expected), within=REPLAY_WITHIN),
                    "check 4: the standby did not replay the uploads within 30 s")

    def download(cursor=None):
        before = chunk_calls(formation, primary_port), chunk_calls(formation, standby_port)
        query = f"?format=csv&cursor={cursor}" if cursor else "?format=csv"
        reply = call("GET", server.url(f"/v1/single-requests/{request}/data{query}"), token=company, timeout=REQUEST_TIMEOUT)
        after = chunk_calls(formation, primary_port), chunk_calls(formation, standby_port)
        rows = reply.body.decode(errors="replace").split("\r\n")[1:] if reply.status == 200 else []
        return reply, [row for row in rows if row], after[0] - before[0], after[1] - before[1]

    reply, rows, on_primary, on_standby = download()
    ok = reply.status == 200 and len(rows) == expected and on_standby >= 2
    verdict.require(ok, f"check 4a: the download answered {reply.status} with {len(rows)} rows of {expected}; chunk statements: "
                        f"standby {on_standby}, primary {on_primary}")
    verdict.figure(f"{'PASS' if ok else 'FAIL'} 4a download on the standby: {len(rows)} of {expected} samples in {reply.seconds:.2f} s; "
                   f"chunk statements on the standby {on_standby}, on the primary {on_primary}")
    cursor = reply.headers.get("data4help-next-cursor")

    verdict.require(pause(formation, standby_port), "check 4: replay on the standby not paused within 10 s")
    reply = call("POST", server.url("/v1/me/samples"), token=tokens[person],
                 body=heart_rate_batch(first + DOWNLOAD_SAMPLES * 60, DOWNLOAD_NEW, step=60))
    verdict.require(reply.status == 200, f"check 4b: the upload answered {reply.status}")
    reply, rows, on_primary, on_standby = download(cursor)
    ok_b = reply.status == 200 and len(rows) == DOWNLOAD_NEW and on_standby == 0 and on_primary >= 1
    verdict.require(ok_b, f"check 4b: with replay paused the next download answered {reply.status} with {len(rows)} rows "
                          f"(expected {DOWNLOAD_NEW}); chunk statements: standby {on_standby}, primary {on_primary}")
    verdict.figure(f"{'PASS' if ok_b else 'FAIL'} 4b standby behind the plan: replay paused, {DOWNLOAD_NEW} samples uploaded; the "
                   f"next download on :{server.port} (bound {LONG_BOUND} s, standby still within it) answered {len(rows)} rows; "
                   f"chunk statements on the primary {on_primary}, on the standby {on_standby}")
    verdict.require(resume(formation, standby_port), "check 4: replay on the standby not resumed within 10 s")


def check_peer_publishing(verdict, formation, server, tokens, primary_port, standby_port):
    def calls(port):
        return int(formation.psql(PEER_CELLS, port=port)[0][0])

    published = "SELECT count(*) FROM peer_months"
    months_before = int(formation.psql(published, port=primary_port)[0][0])
    before = calls(primary_port), calls(standby_port)
    today = datetime.datetime.now(datetime.timezone.utc).date()
    first = (today.replace(day=1) - datetime.timedelta(days=62)).replace(day=1)
    reply = call("GET", server.url(f"/v1/me/statistics?type=heart_rate&from={first.isoformat()}&to={today.isoformat()}&bucket=month"),
                 token=tokens[0], timeout=REQUEST_TIMEOUT)
    on_primary, on_standby = calls(primary_port) - before[0], calls(standby_port) - before[1]
    months = int(formation.psql(published, port=primary_port)[0][0]) - months_before
    cells = formation.psql("SELECT count(*) FROM peer_month_cells", port=primary_port)[0][0]
    ledger = formation.psql("SELECT count(*) FROM privacy_ledger WHERE kind = 'peer_statistics'", port=primary_port)[0][0]
    ok = reply.status == 200 and months >= 1 and on_standby >= 17 * months and on_primary == 0
    verdict.require(ok, f"check 5: the statistics page answered {reply.status}, {months} months published; peer cell statements: "
                        f"standby {on_standby}, primary {on_primary}")
    verdict.figure(f"{'PASS' if ok else 'FAIL'} 5 peer statistics: a statistics page on :{server.port} published {months} closed "
                   f"month(s) in {reply.seconds:.2f} s; peer cell statements on the standby {on_standby}, on the primary "
                   f"{on_primary}; on the primary: {cells} peer_month_cells, {ledger} peer_statistics ledger entries")
