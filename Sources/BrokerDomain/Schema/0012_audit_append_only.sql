-- The audit log is append-only. Whoever connects as the application (and, unless they first disable these
-- triggers as the tables' owner, whoever else holds the database) can only add events: UPDATE, DELETE and
-- TRUNCATE of an event are refused, and the chain head can only move forward onto the event appended in
-- the same transaction. What an owner can still do (disable the triggers, rewrite, truncate) is what the
-- signed checkpoints (`audit_checkpoints`, signed with a key the database never sees) expose.
CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % on % is refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- split
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
-- split
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
-- split

-- `append_audit_event` moves the head one step, onto the event it has just inserted; nothing else may.
CREATE FUNCTION audit_chain_head_forward_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.seq <> OLD.seq + 1 OR NOT EXISTS (
        SELECT 1 FROM audit_events WHERE seq = NEW.seq AND hash = NEW.hash AND prev_hash = OLD.hash
    ) THEN
        RAISE EXCEPTION 'the audit chain head only moves forward onto the event just appended'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END
$$;
-- split
CREATE TRIGGER audit_chain_head_forward BEFORE UPDATE ON audit_chain_head
    FOR EACH ROW EXECUTE FUNCTION audit_chain_head_forward_only();
-- split
CREATE TRIGGER audit_chain_head_kept BEFORE DELETE ON audit_chain_head
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
-- split
CREATE TRIGGER audit_chain_head_no_truncate BEFORE TRUNCATE ON audit_chain_head
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
-- split

-- Signed checkpoints of the chain (Certificate Transparency's signed tree heads): the log's size and head
-- hash at a time, signed with Ed25519 by a key held outside the database (AUDIT_SIGNING_KEY_FILE). Stored
-- here only so auditors can download them; their worth is the signature, which no one holding only the
-- database can make. `signed_at` is the exact text that was signed. Nothing about a person is in a row.
CREATE TABLE audit_checkpoints (
    id        bigserial PRIMARY KEY,
    log_size  bigint NOT NULL CHECK (log_size >= 0),
    head_hash text NOT NULL,
    signed_at text NOT NULL,
    key_id    text NOT NULL,
    signature text NOT NULL
);
-- split
CREATE TRIGGER audit_checkpoints_append_only BEFORE UPDATE OR DELETE ON audit_checkpoints
    FOR EACH ROW EXECUTE FUNCTION audit_refuse_change();
-- split
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change();
-- split

-- Privileges as a second wall, for a deployment whose runtime role is not the owner (README: run
-- `d4h migrate` as the owner, `d4h serve` as a role granted only what it needs): nobody but the owner
-- may change the log, and the owner itself gives up the right (it could take it back: the triggers and
-- the checkpoints are what hold against an owner).
REVOKE UPDATE, DELETE, TRUNCATE ON audit_events, audit_checkpoints FROM PUBLIC;
-- split
REVOKE DELETE, TRUNCATE ON audit_chain_head FROM PUBLIC;
-- split
REVOKE UPDATE, DELETE, TRUNCATE ON audit_events, audit_checkpoints FROM CURRENT_USER;
-- split
REVOKE DELETE, TRUNCATE ON audit_chain_head FROM CURRENT_USER;
