-- Issue 34: group evaluations may read the cohort and its cells from a standby (DATABASE_READ_URL), which
-- lags the primary. Samples a few seconds old are acceptable; a person who has just blocked a company,
-- stopped sharing a type, or left must never be counted. Every such change moves this one counter, in the
-- change's own transaction; an evaluation reads it on the standby before each of its reads and again on the
-- primary under the ledger lock, and evaluates again on the primary when they differ (GroupRequestService).
-- Changes that can only add people (an unblock, sharing again, an activation, a pending account's removal)
-- do not move it: a stale read that misses someone is no breach of anyone's choice.
--
-- The triggers are row-level (a statement that changes no row moves nothing) and deferred to the commit: the
-- counter's row is then locked last, after everything else the transaction locks (the audit chain's head),
-- so two transactions can never take the two in opposite orders and deadlock.
CREATE TABLE consent_version (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    version  bigint NOT NULL
);
-- split

INSERT INTO consent_version (version) VALUES (0);
-- split

CREATE FUNCTION consent_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE consent_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- split

CREATE CONSTRAINT TRIGGER blocks_consent_version AFTER INSERT ON blocks
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION consent_version_bump();
-- split

CREATE CONSTRAINT TRIGGER unshared_types_consent_version AFTER INSERT ON unshared_types
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION consent_version_bump();
-- split

CREATE CONSTRAINT TRIGGER accounts_consent_version AFTER DELETE ON accounts
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.status = 'active') EXECUTE FUNCTION consent_version_bump();
