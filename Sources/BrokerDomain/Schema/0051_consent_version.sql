-- Issue 34: group evaluations may read the cohort and its cells from a standby (DATABASE_READ_URL), which
-- lags the primary. Samples a few seconds old are acceptable; a person who has just blocked a company,
-- stopped sharing a type, or left must never be counted. Every such change moves this one counter, in the
-- change's own transaction; an evaluation reads it on the standby before its reads and again on the primary
-- under the ledger lock, and evaluates again on the primary when the two differ (GroupRequestService).
-- Changes that can only add people (an unblock, sharing again, an activation) do not move it: a stale read
-- that misses someone is no breach of anyone's choice.
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

CREATE TRIGGER blocks_consent_version AFTER INSERT ON blocks
    FOR EACH STATEMENT EXECUTE FUNCTION consent_version_bump();
-- split

CREATE TRIGGER unshared_types_consent_version AFTER INSERT ON unshared_types
    FOR EACH STATEMENT EXECUTE FUNCTION consent_version_bump();
-- split

CREATE TRIGGER accounts_left_consent_version AFTER UPDATE OF status ON accounts
    FOR EACH ROW WHEN (OLD.status = 'active' AND NEW.status IS DISTINCT FROM 'active')
    EXECUTE FUNCTION consent_version_bump();
-- split

CREATE TRIGGER accounts_erased_consent_version AFTER DELETE ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION consent_version_bump();
